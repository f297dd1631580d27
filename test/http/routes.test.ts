import { describe, expect, it } from "vitest"
import { baseApi, defaultShape } from "../../interfaces/http/Api.js"
import { limitedRoutes } from "../../interfaces/http/Feature.js"
import { authGroup } from "../../interfaces/http/features/auth/group.js"
import { profileGroup } from "../../interfaces/http/features/profile/group.js"
import { sessionsGroup } from "../../interfaces/http/features/sessions/group.js"
import { verifyGroup } from "../../interfaces/http/features/verify/group.js"
import { routeTable, UNMATCHED } from "../../interfaces/http/routes.js"

/**
 * The route table the pipeline resolves each request against once: auth, profile and sessions
 * served, verify kept but not served (its settings off), the docs page beside them.
 */
const prefix = defaultShape.authPrefix
const api = baseApi.add(authGroup(defaultShape)).add(profileGroup(defaultShape)).add(sessionsGroup(defaultShape))
const resolve = routeTable(api, {
  extraGetPaths: [`${prefix}/docs`],
  limits: { prefix, routes: [...limitedRoutes(authGroup), ...limitedRoutes(verifyGroup)] }
})

describe("a request's route, resolved once", () => {
  it("is the route as declared, however the router's reading of the path is spelt", () => {
    for (const target of [
      `${prefix}/me`,
      `${prefix}/me/`,
      `${prefix.toUpperCase()}/ME`,
      `/${prefix}//me`,
      `${prefix}/%6De`,
      `${prefix}/me?token=secret`,
      `${prefix}/me;x=1`,
      `http://example.com${prefix}/me`
    ]) {
      const route = resolve("GET", target)
      expect(route.id, target).toBe(`${prefix}/me`)
      expect(route.path, target).toBe(`${prefix}/me`)
    }
    expect(resolve("GET", `${prefix}/me?token=secret`).target).toBe(`${prefix}/me`)
    expect(resolve("GET", `${prefix.toUpperCase()}/ME/`).target).toBe(`${prefix.toUpperCase()}/ME/`)
  })

  it("names a parameter's route by its pattern, and a static route beside it by its own", () => {
    expect(resolve("DELETE", `${prefix}/sessions/8f14e45f-ceea-467e-a53b-9d1d3f2e8c1a`).id).toBe(
      `${prefix}/sessions/:family_id`
    )
    expect(resolve("POST", `${prefix}/sessions/revoke-others`).id).toBe(`${prefix}/sessions/revoke-others`)
    expect(resolve("DELETE", `${prefix}/sessions/revoke-others`).id).toBe(`${prefix}/sessions/:family_id`)
    // An escaped slash stays a part of its segment, as the router reads it.
    expect(resolve("DELETE", `${prefix}/sessions/a%2Fb`).id).toBe(`${prefix}/sessions/:family_id`)
  })

  it("knows the methods a path is served under: a wrong method still names its route", () => {
    const me = resolve("PUT", `${prefix}/me`)
    expect(me.id).toBe(`${prefix}/me`)
    expect([...me.allowed()].sort()).toEqual(["DELETE", "GET", "PATCH"])
    expect(resolve("POST", `${prefix}/sessions/revoke-others`).allowed()).toEqual(
      expect.arrayContaining(["POST", "DELETE"])
    )
    expect(resolve("GET", `${prefix}/docs`).allowed()).toEqual(["GET"])
    const unknown = resolve("GET", "/no-such-route")
    expect(unknown.id).toBe(UNMATCHED)
    expect(unknown.allowed()).toEqual([])
  })

  it("carries its bucket and whether it hashes, HEAD read as GET", () => {
    expect(resolve("POST", `${prefix}/login`)).toMatchObject({ bucket: "login", hashes: true })
    expect(resolve("POST", `${prefix}/register`)).toMatchObject({ bucket: "register", hashes: true })
    expect(resolve("POST", `${prefix}/refresh`)).toMatchObject({ bucket: "refresh", hashes: false })
    expect(resolve("GET", `${prefix}/login`)).toMatchObject({ bucket: undefined, hashes: false })
    expect(resolve("HEAD", `${prefix}/me`)).toMatchObject({ id: `${prefix}/me`, bucket: undefined })
    expect(resolve("POST", `${prefix}/logout`).bucket).toBeUndefined()
  })

  it("counts the limited routes of a kept feature its settings turn off, though no route serves them", () => {
    const reset = resolve("POST", `${prefix}/password-reset/request`)
    expect(reset).toMatchObject({ id: UNMATCHED, bucket: "password_reset", hashes: false })
    expect(reset.allowed()).toEqual([])
    expect(resolve("POST", `${prefix}/verify-email/confirm/`).bucket).toBe("verify_email")
  })
})
