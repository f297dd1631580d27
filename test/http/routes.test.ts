import { describe, expect, it } from "vitest"
import { baseApi, defaultShape } from "../../interfaces/http/Api.js"
import { limitedRoutes } from "../../interfaces/http/Feature.js"
import { authGroup } from "../../interfaces/http/features/auth/group.js"
import { profileGroup } from "../../interfaces/http/features/profile/group.js"
import { sessionsGroup } from "../../interfaces/http/features/sessions/group.js"
import { verifyGroup } from "../../interfaces/http/features/verify/group.js"
import { UNMATCHED } from "../../interfaces/http/routes.js"
import { routeProbe } from "../support/routeProbe.js"

/**
 * A request's route as the platform's router resolves it, once, the router completed so that every
 * request resolves to one: auth, profile and sessions served, verify kept but not served (its
 * settings off), the docs page beside them.
 */
const prefix = defaultShape.authPrefix
const api = baseApi.add(authGroup(defaultShape)).add(profileGroup(defaultShape)).add(sessionsGroup(defaultShape))
const resolve = routeProbe(api, {
  extraGetPaths: [`${prefix}/docs`],
  limits: { prefix, routes: [...limitedRoutes(authGroup), ...limitedRoutes(verifyGroup)] }
})

describe("a request's route, resolved once by the router", () => {
  it("is the route as declared, however the path is spelt for the router", async () => {
    for (const target of [
      `${prefix}/me`,
      `${prefix}/me/`,
      `${prefix.toUpperCase()}/ME`,
      `/${prefix}//me`,
      `${prefix}/me?token=secret`
    ]) {
      expect((await resolve("GET", target)).id, target).toBe(`${prefix}/me`)
    }
    expect((await resolve("GET", `${prefix}/me?token=secret`)).target).toBe(`${prefix}/me`)
    expect((await resolve("GET", `${prefix.toUpperCase()}/ME/`)).target).toBe(`${prefix.toUpperCase()}/ME/`)
  })

  it("names a parameter's route by its pattern, and a static route beside it by its own", async () => {
    expect((await resolve("DELETE", `${prefix}/sessions/8f14e45f-ceea-467e-a53b-9d1d3f2e8c1a`)).id).toBe(
      `${prefix}/sessions/:family_id`
    )
    expect((await resolve("POST", `${prefix}/sessions/revoke-others`)).id).toBe(`${prefix}/sessions/revoke-others`)
    expect((await resolve("DELETE", `${prefix}/sessions/revoke-others`)).id).toBe(`${prefix}/sessions/:family_id`)
  })

  it("knows the methods a path is served under: a wrong method still names its route", async () => {
    const me = await resolve("PUT", `${prefix}/me`)
    expect(me.id).toBe(`${prefix}/me`)
    expect([...me.allowed].sort()).toEqual(["DELETE", "GET", "PATCH"])
    expect((await resolve("GET", `${prefix}/docs`)).allowed).toEqual(["GET"])
    const unknown = await resolve("GET", "/no-such-route")
    expect(unknown.id).toBe(UNMATCHED)
    expect(unknown.allowed).toEqual([])
    expect((await resolve("POST", "/")).id).toBe(UNMATCHED)
  })

  it("carries its bucket and whether it hashes, HEAD read as GET", async () => {
    expect(await resolve("POST", `${prefix}/login`)).toMatchObject({ bucket: "login", hashes: true })
    expect(await resolve("POST", `${prefix}/register`)).toMatchObject({ bucket: "register", hashes: true })
    expect(await resolve("POST", `${prefix}/refresh`)).toMatchObject({ bucket: "refresh", hashes: false })
    expect(await resolve("GET", `${prefix}/login`)).toMatchObject({ hashes: false })
    expect((await resolve("GET", `${prefix}/login`)).bucket).toBeUndefined()
    expect(await resolve("HEAD", `${prefix}/me`)).toMatchObject({ id: `${prefix}/me` })
    expect((await resolve("POST", `${prefix}/logout`)).bucket).toBeUndefined()
  })

  it("counts the limited routes of a kept feature its settings turn off, though no route serves them", async () => {
    const reset = await resolve("POST", `${prefix}/password-reset/request`)
    expect(reset).toMatchObject({ id: UNMATCHED, bucket: "password_reset", hashes: false })
    expect((await resolve("POST", `${prefix}/verify-email/confirm/`)).bucket).toBe("verify_email")
    expect((await resolve("POST", `${prefix.toUpperCase()}/VERIFY-EMAIL/CONFIRM`)).bucket).toBe("verify_email")
  })
})
