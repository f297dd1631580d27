import { describe, expect, it } from "@effect/vitest"
import { DateTime, Effect, Layer, Option, Redacted, TestClock } from "effect"
import { Accounts } from "../../application/Accounts.js"
import { Audit } from "../../application/Audit.js"
import { Apps } from "../../application/oidc/Apps.js"
import { Consents } from "../../application/ports/Consents.js"
import { OidcGrants } from "../../application/ports/OidcGrants.js"
import { useCases } from "../../composition/application.js"
import { type Email, UserId } from "../../domain/User.js"
import { memoryPorts } from "../support/memoryPorts.js"
import { addClient, addUser } from "../support/oidcFixtures.js"

const START = Date.UTC(2026, 11, 1, 12, 0, 0)
const at = (seconds: number) => DateTime.unsafeMake(START + seconds * 1000)
const world = Apps.Default.pipe(Layer.provideMerge(useCases), Layer.provideMerge(memoryPorts(Layer.empty).layer))

const run = <A, E>(body: Effect.Effect<A, E, Layer.Layer.Success<typeof world>>) =>
  Effect.gen(function* () {
    yield* TestClock.setTime(START)
    return yield* body.pipe(Effect.provide(world))
  })

/** Ada, who let in App (two grants) and Tool (none live); Bob, who let in App. */
const setUp = Effect.gen(function* () {
  const ada = yield* addUser("ada@example.com")
  const bob = yield* addUser("bob@example.com")
  yield* addClient("app", { name: "App" })
  yield* addClient("tool", { name: "Tool" })
  const consents = yield* Consents
  yield* consents.grant(ada, "app", ["openid", "email"], at(1))
  yield* consents.grant(ada, "tool", ["openid"], at(2))
  yield* consents.grant(bob, "app", ["openid"], at(3))
  const grants = yield* OidcGrants
  const grant = (grantId: string, userId: string, lastUsed: number) =>
    grants.start(
      {
        grant_id: grantId,
        client_id: "app",
        user_id: userId,
        scopes: ["openid", "email"],
        resources: [],
        auth_time: 1,
        amr: ["pwd"],
        created_at: at(1),
        last_used_at: at(lastUsed),
        expires_at: at(86_400),
        revoked_at: null
      },
      Option.none()
    )
  yield* grant("g1", ada, 10)
  yield* grant("g2", ada, 20)
  yield* grant("g3", bob, 30)
  return { ada: ada, bob: bob }
})

describe("Apps (GET and DELETE /me/apps)", () => {
  it.effect("lists the apps the user let in, with their scopes, when granted and when last used", () =>
    run(
      Effect.gen(function* () {
        const { ada } = yield* setUp
        expect(yield* (yield* Apps).list(ada)).toEqual([
          { client_id: "app", name: "App", scopes: ["openid", "email"], granted_at: at(1), last_used_at: at(20) },
          { client_id: "tool", name: "Tool", scopes: ["openid"], granted_at: at(2), last_used_at: null }
        ])
      })
    )
  )

  it.effect("a withdrawal ends every grant of that app, the user's only, and is audited", () =>
    run(
      Effect.gen(function* () {
        const { ada, bob } = yield* setUp
        const apps = yield* Apps
        expect(yield* apps.withdraw(ada, "app")).toBe(true)
        expect((yield* apps.list(ada)).map((app) => app.client_id)).toEqual(["tool"])
        const grants = yield* OidcGrants
        expect(yield* grants.liveOfUser(ada, at(100))).toEqual([])
        expect((yield* grants.liveOfUser(bob, at(100))).map((grant) => grant.grant_id)).toEqual(["g3"])
        expect(yield* apps.withdraw(ada, "app")).toBe(false)
        expect(yield* apps.withdraw(ada, "nobody")).toBe(false)
        const audited = yield* (yield* Audit).list({ type: "oidc.consent_withdrawn", limit: 5 })
        expect(audited.events.map((event) => event.details)).toEqual([{ client_id: "app", grants_ended: 2 }])
      })
    )
  )

  it.effect(
    "a reset and a deactivation end every grant of the user; an operator's flag change that keeps them active does not",
    () =>
      run(
        Effect.gen(function* () {
          const { ada, bob } = yield* setUp
          const accounts = yield* Accounts
          const grants = yield* OidcGrants
          yield* accounts.setFlags("ada@example.com" as Email, { is_verified: true })
          expect((yield* grants.liveOfUser(ada, at(100))).map((grant) => grant.grant_id)).toEqual(["g2", "g1"])
          yield* accounts.setPassword(UserId.make(ada), Redacted.make("a new password, long enough"))
          expect(yield* grants.liveOfUser(ada, at(100))).toEqual([])
          yield* accounts.setFlags("bob@example.com" as Email, { is_active: false })
          expect(yield* grants.liveOfUser(bob, at(100))).toEqual([])
        })
      )
  )
})
