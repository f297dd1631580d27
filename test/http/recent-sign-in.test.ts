import { describe, expect, layer } from "@effect/vitest"
import { Effect } from "effect"
import { decodeJwt } from "jose"
import { call, expectProblem, password, refresh, signUp, uniqueEmail } from "../support/flows.js"
import { makeOutbox } from "../support/Outbox.js"
import { approve, appWithProviders, begin, callback, person, signInThrough } from "../support/oauthFlows.js"
import { addPasskey, passkeyEnv, registerBegin, registerComplete } from "../support/passkeys.js"
import { SoftwareAuthenticator } from "../support/SoftwareAuthenticator.js"
import * as TestApp from "../support/TestApp.js"

/**
 * Adding a way in needs a recent sign-in (docs/behaviour.md, "Ways in"): a stolen access token, or a
 * session left open, can no longer plant a passkey, a linked provider or a first password. The
 * shortest REAUTH_MAX_AGE_SECONDS (10) makes a sign-in old within the test.
 */

const MAX_AGE = 10

const expectReauthentication = (reply: { status: number; headers: Headers; body: unknown }) => {
  const body = expectProblem(reply, 401, "ReauthenticationRequiredError") as { max_age?: number }
  expect(body.max_age).toBe(MAX_AGE)
  const challenge = reply.headers.get("www-authenticate") ?? ""
  expect(challenge).toMatch(/^Bearer /)
  expect(challenge).toContain('error="insufficient_user_authentication"')
  expect(challenge).toContain(`max_age=${MAX_AGE}`)
}

const claims = (token: string) => decodeJwt(token) as { auth_time?: number; iat: number }

describe("a recent sign-in before adding a way in", () => {
  const outbox = makeOutbox()
  layer(
    appWithProviders(
      TestApp.backends[0] as TestApp.Backend,
      { ...passkeyEnv, SERVICE_REAUTH_MAX_AGE_SECONDS: String(MAX_AGE) },
      { events: outbox.handlers }
    ),
    { excludeTestServices: true }
  )((it) => {
    it.effect(
      "a sign-in older than REAUTH_MAX_AGE_SECONDS adds nothing until the user signs in again",
      () =>
        Effect.gen(function* () {
          // Fresh: everything started now, finished once the sign-in is old.
          const old = yield* signUp("stale")
          const challenge = (yield* registerBegin(old)).body as { challenge_key: string }
          const linkFlow = yield* begin("github", old.access)
          const code = yield* approve(linkFlow, person("mine"))
          const someone = person("social", { email: uniqueEmail("social") })
          const socialOnly = yield* signInThrough("google", someone)
          const signedInAt = claims(old.access).auth_time ?? 0
          expect(signedInAt).toBe(claims(old.access).iat)

          yield* Effect.sleep(`${MAX_AGE + 1} seconds`)

          // A refresh keeps the sign-in's time: a new access token is no new sign-in.
          const refreshed = yield* refresh(old.refresh)
          expect(refreshed.status).toBe(200)
          const renewed = refreshed.body as { access_token: string; refresh_token: string }
          expect(claims(renewed.access_token).auth_time).toBe(signedInAt)
          expect(claims(renewed.access_token).iat).toBeGreaterThan(signedInAt)
          const stale = { ...old, access: renewed.access_token }

          expectReauthentication(yield* registerBegin(stale))
          expectReauthentication(
            yield* registerComplete(stale, {
              challenge_key: challenge.challenge_key,
              credential: new SoftwareAuthenticator().register(challenge as never),
              device_name: "planted"
            })
          )
          expectReauthentication(
            yield* call(
              "GET",
              `/oauth/github/link/authorize?redirect_uri=${encodeURIComponent(linkFlow.authorizationUrl.searchParams.get("redirect_uri") ?? "")}`,
              {
                token: stale.access
              }
            )
          )
          expectReauthentication(
            yield* callback("github", { code, state: linkFlow.state, binding: linkFlow.binding }, stale.access)
          )
          expectReauthentication(
            yield* call("POST", "/change-password", {
              token: socialOnly.access,
              json: { new_password: "a first password, planted" }
            })
          )
          // Nor is the account moved to another address on the strength of an old sign-in.
          const elsewhere = uniqueEmail("moved")
          expectReauthentication(
            yield* call("POST", "/me/email", { token: stale.access, json: { new_email: elsewhere } })
          )
          expect(yield* outbox.count("send_email_change_email", elsewhere)).toBe(0)
          expect((yield* call("GET", "/passkeys", { token: stale.access })).body).toEqual([])
          expect((yield* call("GET", "/oauth/accounts", { token: stale.access })).body).toEqual([])

          // The current password is a proof of its own: a change with it needs no recent sign-in.
          const changed = yield* call("POST", "/change-password", {
            token: stale.access,
            json: { current_password: password, new_password: "a newer passphrase 1" }
          })
          expect(changed.status).toBe(200)

          // Signed in again, the same user adds a passkey, and is told.
          const again = yield* signUp("fresh")
          yield* addPasskey(again, new SoftwareAuthenticator())
          const [email, notice] = yield* outbox.next("send_security_notice", again.email)
          expect(email).toBe(again.email)
          expect(notice).toMatchObject({ kind: "passkey_added", subject: "Test laptop" })
          const social = yield* signInThrough("google", someone)
          const first = yield* call("POST", "/change-password", {
            token: social.access,
            json: { new_password: "a first password, mine" }
          })
          expect(first.status).toBe(200)
        }),
      60_000
    )
  })
})
