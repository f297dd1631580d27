import { describe, expect, layer } from "@effect/vitest"
import { Effect, Option, Redacted } from "effect"
import { decodeJwt } from "jose"
import { Accounts } from "../../application/Accounts.js"
import { AuditLog } from "../../application/ports/AuditLog.js"
import { PasskeyRepo } from "../../application/ports/PasskeyRepo.js"
import { UserRepo } from "../../application/ports/UserRepo.js"
import { Sessions } from "../../application/Sessions.js"
import { WaysIn } from "../../application/WaysIn.js"
import { UserId } from "../../domain/User.js"
import { WayInChange } from "../../domain/WaysIn.js"
import { call, expectProblem, login, me, password, refresh, register, signIn, uniqueEmail } from "../support/flows.js"
import { makeOutbox } from "../support/Outbox.js"
import { appWithProviders, person, signInThrough, through } from "../support/oauthFlows.js"
import { addPasskey, passkeyEnv, passkeySignIn } from "../support/passkeys.js"
import { SoftwareAuthenticator } from "../support/SoftwareAuthenticator.js"
import * as TestApp from "../support/TestApp.js"

/**
 * A user's ways in as one model (docs/behaviour.md, "Ways in"), through HTTP on every store: what the
 * outside attack found, each reproduced. A squatter who registered someone else's address
 * without proving it added a passkey and linked their own provider account; the owner's proof
 * of the address (a provider that vouches for it, the mailed reset link) must leave the
 * squatter no way in at all.
 */

const typesFor = (userId: string) =>
  Effect.flatMap(AuditLog, (log) =>
    Effect.map(log.list({ user_id: UserId.make(userId), limit: 100 }), (entries) => entries.map((entry) => entry.type))
  )

const linkedProviders = (access: string) =>
  Effect.map(call("GET", "/oauth/accounts", { token: access }), (reply) => {
    expect(reply.status).toBe(200)
    return (reply.body as ReadonlyArray<{ provider: string }>).map((account) => account.provider)
  })

const passkeyCount = (access: string) =>
  Effect.map(call("GET", "/passkeys", { token: access }), (reply) => {
    expect(reply.status).toBe(200)
    return (reply.body as ReadonlyArray<unknown>).length
  })

for (const backend of TestApp.backendsWithFile()) {
  describe(`ways in (${backend.name})`, () => {
    const outbox = makeOutbox()
    layer(appWithProviders(backend, passkeyEnv, { events: outbox.handlers }), { excludeTestServices: true })((it) => {
      /** A squatter's account of `victim`: a password, a passkey, their own GitHub account linked. */
      const squat = (victim: string) =>
        Effect.gen(function* () {
          expect((yield* register(victim)).status).toBe(202)
          const session = yield* signIn(victim)
          const authenticator = new SoftwareAuthenticator()
          yield* addPasskey(session, authenticator)
          const ownGithub = person("squatter")
          expect((yield* through("github", ownGithub, session.access)).status).toBe(200)
          expect(yield* linkedProviders(session.access)).toEqual(["github"])
          return { session, authenticator, ownGithub }
        })

      /** Every way the squatter had into `victim`'s account now fails or leads elsewhere. */
      const expectNoWayIn = (
        squatter: Effect.Effect.Success<ReturnType<typeof squat>>,
        victim: string,
        ownerId: string | number
      ) =>
        Effect.gen(function* () {
          expectProblem(yield* passkeySignIn(squatter.authenticator), 401, "AuthenticationError")
          expectProblem(yield* login(victim), 401, "AuthenticationError")
          expect((yield* me(squatter.session.access)).status).toBe(401)
          expect((yield* refresh(squatter.session.refresh)).status).toBe(401)
          // Their own GitHub account signs in to an account of its own, never to the owner's.
          const elsewhere = yield* signInThrough("github", squatter.ownGithub)
          expect(elsewhere.user.id).not.toEqual(ownerId)
          expect(elsewhere.user.email).not.toBe(victim)
        })

      it.effect("a provider's proof of the address removes the squatter's password, passkey and linked provider", () =>
        Effect.gen(function* () {
          const victim = uniqueEmail("victim")
          const squatter = yield* squat(victim)
          const owner = yield* signInThrough("google", person("owner", { email: victim }))
          expect(owner.user.is_verified).toBe(true)

          yield* expectNoWayIn(squatter, victim, owner.user.id)
          expect(yield* passkeyCount(owner.access)).toBe(0)
          expect(yield* linkedProviders(owner.access)).toEqual(["google"])
          // Nor can the squatter's token, had it survived, set a password on the owner's account.
          expect(
            (yield* call("POST", "/change-password", {
              token: squatter.session.access,
              json: { new_password: "the squatter's new password" }
            })).status
          ).toBe(401)

          const types = yield* typesFor(String(owner.user.id))
          for (const type of [
            "takeover.password_cleared",
            "takeover.passkey_removed",
            "takeover.provider_unlinked",
            "takeover.sessions_ended",
            "oauth.auto_linked"
          ]) {
            expect(types).toContain(type)
          }
        })
      )

      it.effect("a reset from the mailed link removes the squatter's passkey and linked provider too", () =>
        Effect.gen(function* () {
          const victim = uniqueEmail("victim")
          const squatter = yield* squat(victim)
          expect((yield* call("POST", "/password-reset/request", { json: { email: victim } })).status).toBe(202)
          const token = yield* outbox.token("send_password_reset_email", victim)
          const newPassword = "the owner's own passphrase"
          expect(
            (yield* call("POST", "/password-reset/confirm", { json: { token, new_password: newPassword } })).status
          ).toBe(200)

          const owner = yield* signIn(victim, newPassword)
          yield* expectNoWayIn(squatter, victim, owner.id)
          expect(yield* passkeyCount(owner.access)).toBe(0)
          expect(yield* linkedProviders(owner.access)).toEqual([])
          const types = yield* typesFor(owner.userId)
          expect(types).toEqual(
            expect.arrayContaining([
              "password.reset",
              "takeover.password_cleared",
              "takeover.passkey_removed",
              "takeover.provider_unlinked",
              "takeover.sessions_ended"
            ])
          )
        })
      )

      it.effect("an account that proved its address keeps its passkeys and links through a reset", () =>
        Effect.gen(function* () {
          const email = uniqueEmail("owner")
          expect((yield* register(email)).status).toBe(202)
          const verifyToken = yield* outbox.token("send_verification_email", email)
          expect((yield* call("POST", "/verify-email/confirm", { json: { token: verifyToken } })).status).toBe(200)
          const session = yield* signIn(email)
          const authenticator = new SoftwareAuthenticator()
          yield* addPasskey(session, authenticator)
          expect((yield* through("github", person("own"), session.access)).status).toBe(200)

          expect((yield* call("POST", "/password-reset/request", { json: { email } })).status).toBe(202)
          const token = yield* outbox.token("send_password_reset_email", email)
          const newPassword = "another passphrase of mine"
          expect(
            (yield* call("POST", "/password-reset/confirm", { json: { token, new_password: newPassword } })).status
          ).toBe(200)

          // Every session ended; every way in stays.
          expect((yield* me(session.access)).status).toBe(401)
          const again = yield* signIn(email, newPassword)
          expect(yield* passkeyCount(again.access)).toBe(1)
          expect(yield* linkedProviders(again.access)).toEqual(["github"])
          expect((yield* passkeySignIn(authenticator)).status).toBe(200)
          expect(yield* typesFor(again.userId)).not.toContain("takeover.sessions_ended")
        })
      )

      it.effect("an auto-link to a verified account is recorded as one, and takes nothing away", () =>
        Effect.gen(function* () {
          const email = uniqueEmail("verified")
          expect((yield* register(email)).status).toBe(202)
          const verifyToken = yield* outbox.token("send_verification_email", email)
          expect((yield* call("POST", "/verify-email/confirm", { json: { token: verifyToken } })).status).toBe(200)
          const session = yield* signIn(email)

          const linked = yield* signInThrough("google", person("same", { email }))
          expect(String(linked.user.id)).toBe(session.userId)
          // The password still works, and the session started before goes on.
          expect((yield* login(email)).status).toBe(200)
          expect((yield* me(session.access)).status).toBe(200)
          const types = yield* typesFor(session.userId)
          expect(types).toContain("oauth.auto_linked")
          expect(types.filter((type) => type.startsWith("takeover."))).toEqual([])
        })
      )

      it.effect("a provider vouching for a look-alike of an address reaches no account of it", () =>
        Effect.gen(function* () {
          const local = `kate-${Math.random().toString(36).slice(2, 10)}`
          const email = `${local}@example.com`
          expect((yield* register(email)).status).toBe(202)
          const session = yield* signIn(email)
          // U+212A KELVIN SIGN, which NFC turns into `K`, and Unicode lower-casing into `k`.
          const lookAlike = `\u212A${local.slice(1)}@example.com`
          expectProblem(yield* through("google", person("kelvin", { email: lookAlike })), 400, "OAuthError")
          expect(yield* linkedProviders(session.access)).toEqual([])
          expect((yield* me(session.access)).status).toBe(200)
        })
      )

      it.effect("the sign-in's time stays in the access tokens a refresh issues", () =>
        Effect.gen(function* () {
          const email = uniqueEmail("auth-time")
          expect((yield* register(email)).status).toBe(202)
          const session = yield* signIn(email)
          const signedIn = decodeJwt(session.access).auth_time
          expect(signedIn).toEqual(expect.any(Number))
          yield* Effect.sleep("1100 millis")
          const renewed = (yield* refresh(session.refresh)).body as { access_token: string }
          const claims = decodeJwt(renewed.access_token)
          expect(claims.auth_time).toBe(signedIn)
          expect(claims.iat).toBeGreaterThan(signedIn as number)
        })
      )

      it.effect("a request authenticated before a change of the ways in adds nothing after it", () =>
        Effect.gen(function* () {
          const sessions = yield* Sessions
          const accounts = yield* Accounts
          const waysIn = yield* WaysIn
          const passkeys = yield* PasskeyRepo
          const email = uniqueEmail("in-flight")
          expect((yield* register(email)).status).toBe(202)
          const session = yield* signIn(email)
          // The request's principal, read when it was authenticated.
          const inFlight = yield* sessions.authenticate(session.access)

          // Meanwhile the owner changes the password, which ends every other session.
          const other = yield* signIn(email)
          const changed = yield* call("POST", "/change-password", {
            token: other.access,
            json: { current_password: password, new_password: "the owner's new passphrase" }
          })
          expect(changed.status).toBe(200)

          const refused = yield* Effect.flip(
            accounts.changePassword(inFlight, Option.some(Redacted.make(password)), Redacted.make("planted passphrase"))
          )
          expect(refused._tag).toBe("CredentialsChangedError")
          const planted = yield* Effect.flip(
            waysIn.change(
              inFlight.user,
              WayInChange.PasskeyAdded({ passkey_id: "planted", device_name: "planted" }),
              Effect.void,
              { expectedVersion: inFlight.user.credential_version }
            )
          )
          expect(planted._tag).toBe("CredentialsChangedError")
          expect(yield* passkeys.countOf(inFlight.user.id)).toBe(0)
          expect((yield* login(email, "planted passphrase")).status).toBe(401)
          expect((yield* login(email, "the owner's new passphrase")).status).toBe(200)
        })
      )

      it.effect("a sign-in that read the user before a change of its ways in starts no session", () =>
        Effect.gen(function* () {
          const users = yield* UserRepo
          const sessions = yield* Sessions
          const email = uniqueEmail("stale")
          expect((yield* register(email)).status).toBe(202)
          const session = yield* signIn(email)
          const read = (yield* users.findById(UserId.make(session.userId))).pipe(Option.getOrThrow)

          const changed = yield* call("POST", "/change-password", {
            token: session.access,
            json: { current_password: password, new_password: "a changed passphrase" }
          })
          expect(changed.status).toBe(200)
          const now = (yield* users.findById(UserId.make(session.userId))).pipe(Option.getOrThrow)
          expect(now.credential_version).toBeGreaterThan(read.credential_version)

          const client = { ip_address: null, user_agent: null }
          const stale = yield* Effect.flip(sessions.start(read, client, { method: "password" }))
          expect(stale._tag).toBe("CredentialsChangedError")
          expect(yield* typesFor(session.userId)).toContain("sign_in.failed")
          const pair = yield* sessions.start(now, client, { method: "password" })
          expect((yield* me(pair.access_token)).status).toBe(200)
        })
      )
    })
  })
}
