import { describe, expect, layer } from "@effect/vitest"
import { Effect, Option } from "effect"
import { OAuthAccountRepo } from "../../application/ports/OAuthAccountRepo.js"
import { UserRepo } from "../../application/ports/UserRepo.js"
import { UserId } from "../../domain/User.js"
import { call, expectProblem, me, type Session, signUp, uniqueEmail } from "../support/flows.js"
import {
  addPasskey,
  authenticateBegin,
  authenticateComplete,
  passkeyEnv,
  passkeySignIn,
  registerBegin,
  registerComplete,
  registerPasskey,
  signInOptions
} from "../support/passkeys.js"
import { SoftwareAuthenticator } from "../support/SoftwareAuthenticator.js"
import * as TestApp from "../support/TestApp.js"

/**
 * The passkey routes (spec: passkey routes, rules 1–6, the sign-count rows of the states table)
 * through HTTP with a software authenticator, on every backend.
 */

const WITHOUT_ZONE = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}$/
const B64URL = /^[A-Za-z0-9_-]+$/

/** A user that can sign in only with passkeys: its password cleared. */
const withoutPassword = (session: Session) =>
  Effect.flatMap(UserRepo, (users) => users.clearPassword(UserId.make(session.userId)))

const listPasskeys = (session: Session) => call("GET", "/passkeys", { token: session.access })
const deletePasskey = (session: Session, id: string) => call("DELETE", `/passkeys/${id}`, { token: session.access })

for (const backend of TestApp.backends) {
  describe(`passkeys (${backend.name})`, () => {
    layer(TestApp.layer(backend, passkeyEnv), { excludeTestServices: true })((it) => {
      it.effect("register/begin answers the creation options and a registration challenge key", () =>
        Effect.gen(function* () {
          const session = yield* signUp("pk-options")
          const reply = yield* registerBegin(session)
          expect(reply.status).toBe(200)
          const options = reply.body as Record<string, unknown> & {
            user: { id: string; name: string; displayName: string }
            pubKeyCredParams: Array<{ type: string; alg: number }>
          }
          expect(options.rp).toEqual({ name: "Portcullis tests", id: "localhost" })
          expect(options.user.name).toBe(session.email)
          expect(options.user.displayName).toBe(session.email)
          // The user handle is the user's id, so that a discoverable credential names its owner.
          expect(Buffer.from(options.user.id, "base64url").toString()).toBe(session.userId)
          expect(options.challenge).toMatch(B64URL)
          expect(options.challenge_key).toMatch(/^passkey:reg:/)
          expect(options.pubKeyCredParams.map((param) => param.alg)).toEqual(expect.arrayContaining([-7, -8]))
          expect(options.excludeCredentials).toEqual([])
          expect(reply.headers.get("cache-control")).toBe("no-store")
        })
      )

      it.effect("register/complete stores the passkey (201, as listed) and later options exclude it", () =>
        Effect.gen(function* () {
          const session = yield* signUp("pk-register")
          const authenticator = new SoftwareAuthenticator()
          const { complete, credential } = yield* registerPasskey(session, authenticator, {}, "  Work laptop ")
          expect(complete.status).toBe(201)
          const created = complete.body as Record<string, unknown>
          expect(Object.keys(created).sort()).toEqual(
            ["backed_up", "created_at", "device_name", "id", "last_used_at", "transports"].sort()
          )
          expect(created).toMatchObject({
            device_name: "Work laptop",
            transports: ["internal"],
            backed_up: false,
            last_used_at: null
          })
          expect(created.created_at).toMatch(WITHOUT_ZONE)
          const listed = yield* listPasskeys(session)
          expect(listed.status).toBe(200)
          expect(listed.body).toEqual([created])
          const again = (yield* registerBegin(session)).body as { excludeCredentials: Array<{ id: string }> }
          expect(again.excludeCredentials.map((descriptor) => descriptor.id)).toEqual([credential.id])
        })
      )

      it.effect("registration needs a bearer token", () =>
        Effect.gen(function* () {
          expectProblem(yield* call("POST", "/passkeys/register/begin"), 401, "TokenError")
          expectProblem(yield* call("GET", "/passkeys"), 401, "TokenError")
        })
      )

      it.effect("register/complete refuses a wrong origin, a wrong RP ID and a missing user verification (400)", () =>
        Effect.gen(function* () {
          const session = yield* signUp("pk-reg-refused")
          const authenticator = new SoftwareAuthenticator()
          for (const overrides of [
            { origin: "https://evil.example" },
            { origin: "http://localhost:8001" },
            { rpId: "evil.example" },
            { flags: { uv: false } }
          ]) {
            const { complete } = yield* registerPasskey(session, authenticator, overrides)
            expectProblem(complete, 400, "PasskeyRegistrationError")
          }
          expect((yield* listPasskeys(session)).body).toEqual([])
        })
      )

      it.effect("a registration challenge completes once, and only for the user it was issued to", () =>
        Effect.gen(function* () {
          const alice = yield* signUp("pk-alice")
          const mallory = yield* signUp("pk-mallory")
          const authenticator = new SoftwareAuthenticator()
          const { options, credential, complete } = yield* registerPasskey(alice, authenticator)
          expect(complete.status).toBe(201)
          const replay = { challenge_key: options.challenge_key, credential, device_name: "again" }
          expectProblem(yield* registerComplete(alice, replay), 400, "PasskeyRegistrationError")

          const begun = (yield* registerBegin(alice)).body as { challenge_key: string }
          const stolen = new SoftwareAuthenticator().register(begun as never)
          const body = { challenge_key: begun.challenge_key, credential: stolen, device_name: "stolen" }
          expectProblem(yield* registerComplete(mallory, body), 400, "PasskeyRegistrationError")
          // Refused for Mallory, and spent: Alice cannot use it either.
          expectProblem(yield* registerComplete(alice, body), 400, "PasskeyRegistrationError")
          expect((yield* listPasskeys(mallory)).body).toEqual([])
        })
      )

      it.effect("a credential registered already is refused, to its owner and to anyone else", () =>
        Effect.gen(function* () {
          const alice = yield* signUp("pk-dup-a")
          const bob = yield* signUp("pk-dup-b")
          const { credentialId } = yield* addPasskey(alice, new SoftwareAuthenticator())
          const { complete } = yield* registerPasskey(bob, new SoftwareAuthenticator(), { credentialId })
          expectProblem(complete, 400, "PasskeyRegistrationError")
        })
      )

      it.effect("register/complete refuses malformed bodies with 422, never 500", () =>
        Effect.gen(function* () {
          const session = yield* signUp("pk-reg-422")
          const begun = (yield* registerBegin(session)).body as { challenge_key: string }
          const credential = new SoftwareAuthenticator().register(begun as never)
          const valid = { challenge_key: begun.challenge_key, credential, device_name: "x" }
          for (const body of [
            {},
            { ...valid, extra: 1 },
            { ...valid, device_name: "" },
            { ...valid, device_name: "a".repeat(101) },
            { ...valid, device_name: "tab\there" },
            { ...valid, challenge_key: "passkey:auth:00000000-0000-4000-8000-000000000000" },
            { ...valid, credential: { ...credential, type: "password" } },
            { ...valid, credential: { ...credential, response: {} } }
          ]) {
            expectProblem(yield* registerComplete(session, body), 422, "ValidationError")
          }
        })
      )

      it.effect("a well-formed credential holding garbage is refused as a failed ceremony, never a 500", () =>
        Effect.gen(function* () {
          const session = yield* signUp("pk-garbage")
          const authenticator = new SoftwareAuthenticator()
          yield* addPasskey(session, authenticator)
          const begun = (yield* registerBegin(session)).body as { challenge_key: string }
          const created = new SoftwareAuthenticator().register(begun as never)
          for (const response of [
            { ...created.response, attestationObject: "AAAA" },
            { ...created.response, clientDataJSON: "e30" },
            { ...created.response, clientDataJSON: "not base64!" }
          ]) {
            const again = (yield* registerBegin(session)).body as { challenge_key: string }
            const body = { challenge_key: again.challenge_key, credential: { ...created, response }, device_name: "x" }
            expectProblem(yield* registerComplete(session, body), 400, "PasskeyRegistrationError")
          }
          const options = yield* signInOptions(session.email)
          const asserted = authenticator.authenticate(options)
          for (const response of [
            { ...asserted.response, authenticatorData: "AAAA" },
            { ...asserted.response, signature: "AAAA" },
            { ...asserted.response, clientDataJSON: "e30" }
          ]) {
            const fresh = yield* signInOptions(session.email)
            const reply = yield* authenticateComplete({
              challenge_key: fresh.challenge_key,
              credential: { ...asserted, response }
            })
            expectProblem(reply, 401, "AuthenticationError")
          }
        })
      )

      it.effect("sign-in with a passkey answers a LoginResponse whose tokens work and whose session is listed", () =>
        Effect.gen(function* () {
          const session = yield* signUp("pk-signin")
          const authenticator = new SoftwareAuthenticator()
          const { id } = yield* addPasskey(session, authenticator)
          const options = yield* signInOptions(session.email)
          expect(options.challenge_key).toMatch(/^passkey:auth:/)
          const reply = yield* authenticateComplete({
            challenge_key: options.challenge_key,
            credential: authenticator.authenticate(options)
          })
          expect(reply.status).toBe(200)
          const body = reply.body as { access_token: string; refresh_token: string; token_type: string; user: unknown }
          expect(body).toMatchObject({ token_type: "bearer", expires_in: 900, user: { email: session.email } })
          expect(body.refresh_token).toEqual(expect.any(String))
          expect((yield* me(body.access_token)).status).toBe(200)
          const sessions = (yield* call("GET", "/sessions", { token: body.access_token })).body as Array<unknown>
          expect(sessions).toHaveLength(2)
          const [listed] = (yield* listPasskeys(session)).body as Array<{ id: string; last_used_at: string | null }>
          expect(listed?.id).toBe(id)
          expect(listed?.last_used_at).toMatch(WITHOUT_ZONE)
        })
      )

      it.effect("with an email, allowCredentials lists the user's credentials; unknown emails get [] alike", () =>
        Effect.gen(function* () {
          const withPasskey = yield* signUp("pk-allow")
          const { credentialId } = yield* addPasskey(withPasskey, new SoftwareAuthenticator())
          const withoutPasskey = yield* signUp("pk-none")
          const known = yield* signInOptions(withPasskey.email)
          const none = yield* signInOptions(withoutPasskey.email)
          const unknown = yield* signInOptions(uniqueEmail("nobody"))
          expect(known.allowCredentials?.map((descriptor) => descriptor.id)).toEqual([credentialId])
          expect(none.allowCredentials).toEqual([])
          expect(unknown.allowCredentials).toEqual([])
          expect(Object.keys(unknown).sort()).toEqual(Object.keys(known).sort())
          expect(Object.keys(none).sort()).toEqual(Object.keys(known).sort())
          // The address is normalised as sign-in normalises it.
          const spelled = yield* signInOptions(`  ${withPasskey.email.toUpperCase()} `)
          expect(spelled.allowCredentials?.map((descriptor) => descriptor.id)).toEqual([credentialId])
        })
      )

      it.effect("without an email the browser's discoverable credential signs in (no allowCredentials)", () =>
        Effect.gen(function* () {
          const session = yield* signUp("pk-discoverable")
          const authenticator = new SoftwareAuthenticator({ resident: true })
          yield* addPasskey(session, authenticator)
          const options = yield* signInOptions()
          expect(options.allowCredentials ?? []).toEqual([])
          for (const body of [null, {}]) {
            const reply = yield* call("POST", "/passkeys/authenticate/begin", { json: body })
            expect(reply.status).toBe(200)
            expect((reply.body as { allowCredentials?: unknown }).allowCredentials ?? []).toEqual([])
          }
          const reply = yield* authenticateComplete({
            challenge_key: options.challenge_key,
            credential: authenticator.authenticate(options)
          })
          expect(reply.status).toBe(200)
          expect((reply.body as { user: { email: string } }).user.email).toBe(session.email)
        })
      )

      it.effect("authenticate/begin refuses malformed bodies with 422", () =>
        Effect.gen(function* () {
          for (const json of [{ email: "not an email" }, { email: 1 }, { email: "a@b.example", extra: true }, []]) {
            expectProblem(yield* call("POST", "/passkeys/authenticate/begin", { json }), 422, "ValidationError")
          }
        })
      )

      it.effect("a wrong origin, a wrong RP ID or a missing user verification is refused with the one 401", () =>
        Effect.gen(function* () {
          const session = yield* signUp("pk-auth-refused")
          const authenticator = new SoftwareAuthenticator()
          yield* addPasskey(session, authenticator)
          const refusals = []
          for (const overrides of [
            { origin: "https://evil.example" },
            { rpId: "evil.example" },
            { flags: { uv: false } },
            { flags: { up: false } }
          ]) {
            refusals.push(expectProblem(yield* passkeySignIn(authenticator, { overrides }), 401, "AuthenticationError"))
          }
          // One body for every cause.
          expect(new Set(refusals.map((body) => body.detail)).size).toBe(1)
          expect((yield* passkeySignIn(authenticator)).status).toBe(200)
        })
      )

      it.effect("an authentication challenge completes once", () =>
        Effect.gen(function* () {
          const session = yield* signUp("pk-replay")
          const authenticator = new SoftwareAuthenticator()
          yield* addPasskey(session, authenticator)
          const options = yield* signInOptions(session.email)
          const first = yield* authenticateComplete({
            challenge_key: options.challenge_key,
            credential: authenticator.authenticate(options)
          })
          expect(first.status).toBe(200)
          // A fresh, valid assertion over the spent challenge.
          const replay = yield* authenticateComplete({
            challenge_key: options.challenge_key,
            credential: authenticator.authenticate(options)
          })
          expectProblem(replay, 401, "AuthenticationError")
          // A challenge key nobody issued, and a registration key, are no better.
          const unknown = yield* authenticateComplete({
            challenge_key: "passkey:auth:00000000-0000-4000-8000-000000000000",
            credential: authenticator.authenticate(options)
          })
          expectProblem(unknown, 401, "AuthenticationError")
          const registrationKey = ((yield* registerBegin(session)).body as { challenge_key: string }).challenge_key
          const crossed = yield* authenticateComplete({
            challenge_key: registrationKey,
            credential: authenticator.authenticate(options)
          })
          expectProblem(crossed, 422, "ValidationError")
        })
      )

      it.effect("a sign count that does not move forward is a suspected clone (401); the stored count stays", () =>
        Effect.gen(function* () {
          const session = yield* signUp("pk-clone")
          const authenticator = new SoftwareAuthenticator()
          const { credentialId } = yield* addPasskey(session, authenticator)
          expect((yield* passkeySignIn(authenticator, { overrides: { signCount: 5 } })).status).toBe(200)
          // The same count again, then a lower one: another copy of the key signed in between.
          for (const signCount of [5, 3]) {
            expectProblem(yield* passkeySignIn(authenticator, { overrides: { signCount } }), 401, "AuthenticationError")
          }
          // The genuine authenticator, counting on from 5, still signs in.
          authenticator.setSignCount(credentialId, 5)
          expect((yield* passkeySignIn(authenticator)).status).toBe(200)
        })
      )

      it.effect("a reported count of 0 skips the clone check (synced passkeys), whatever was stored", () =>
        Effect.gen(function* () {
          const session = yield* signUp("pk-zero")
          const synced = new SoftwareAuthenticator({ counter: "zero", flags: { be: true, bs: true } })
          const { complete } = yield* registerPasskey(session, synced)
          expect((complete.body as { backed_up: boolean }).backed_up).toBe(true)
          for (let i = 0; i < 3; i++) expect((yield* passkeySignIn(synced)).status).toBe(200)

          const counting = new SoftwareAuthenticator()
          const other = yield* signUp("pk-zero-after")
          yield* addPasskey(other, counting)
          expect((yield* passkeySignIn(counting, { overrides: { signCount: 7 } })).status).toBe(200)
          expect((yield* passkeySignIn(counting, { overrides: { signCount: 0 } })).status).toBe(200)
          // Skipping the check stored nothing: 7 is still the count to beat.
          expectProblem(yield* passkeySignIn(counting, { overrides: { signCount: 7 } }), 401, "AuthenticationError")
          expect((yield* passkeySignIn(counting, { overrides: { signCount: 8 } })).status).toBe(200)
        })
      )

      it.effect("a user handle that is not the passkey owner's is refused", () =>
        Effect.gen(function* () {
          const alice = yield* signUp("pk-handle-a")
          const bob = yield* signUp("pk-handle-b")
          const authenticator = new SoftwareAuthenticator()
          yield* addPasskey(alice, authenticator)
          const bobsHandle = Buffer.from(bob.userId).toString("base64url")
          expectProblem(
            yield* passkeySignIn(authenticator, { overrides: { userHandle: bobsHandle } }),
            401,
            "AuthenticationError"
          )
          // No user handle at all (a credential that is not discoverable) is fine.
          const reply = yield* passkeySignIn(authenticator, { email: alice.email, overrides: { userHandle: null } })
          expect(reply.status).toBe(200)
        })
      )

      it.effect("an unknown credential and an inactive user are refused with the one 401", () =>
        Effect.gen(function* () {
          const session = yield* signUp("pk-inactive")
          const authenticator = new SoftwareAuthenticator()
          yield* addPasskey(session, authenticator)
          const stranger = new SoftwareAuthenticator()
          const other = yield* signUp("pk-stranger")
          yield* addPasskey(other, stranger)
          const options = yield* signInOptions()
          const forged = stranger.authenticate(options)
          const unknown = yield* authenticateComplete({
            challenge_key: options.challenge_key,
            credential: { ...forged, id: "AAAA", rawId: "AAAA" }
          })
          expectProblem(unknown, 401, "AuthenticationError")

          yield* Effect.flatMap(UserRepo, (users) => users.setFlags(UserId.make(session.userId), { is_active: false }))
          expectProblem(yield* passkeySignIn(authenticator, { email: session.email }), 401, "AuthenticationError")
        })
      )

      it.effect("Ed25519 and P-256 passkeys both register and sign in", () =>
        Effect.gen(function* () {
          for (const algorithm of ["EdDSA", "ES256"] as const) {
            const session = yield* signUp(`pk-${algorithm}`)
            const authenticator = new SoftwareAuthenticator()
            yield* addPasskey(session, authenticator, { algorithm })
            expect(authenticator.credentials[0]?.algorithm).toBe(algorithm)
            const reply = yield* passkeySignIn(authenticator, { email: session.email })
            expect(reply.status).toBe(200)
          }
        })
      )

      it.effect("DELETE answers 404 for an unknown id, a malformed one and another user's passkey", () =>
        Effect.gen(function* () {
          const alice = yield* signUp("pk-del-a")
          const bob = yield* signUp("pk-del-b")
          const { id } = yield* addPasskey(alice, new SoftwareAuthenticator())
          for (const target of ["00000000-0000-4000-8000-000000000000", "not-a-uuid", id]) {
            expectProblem(yield* deletePasskey(bob, target), 404, "NotFoundError")
          }
          expect((yield* listPasskeys(alice)).body).toHaveLength(1)
          expectProblem(yield* call("DELETE", `/passkeys/${id}`), 401, "TokenError")
        })
      )

      it.effect("DELETE answers 204 while another way to sign in is left, 400 for the last one", () =>
        Effect.gen(function* () {
          // A password is left.
          const withPassword = yield* signUp("pk-del-pw")
          const first = yield* addPasskey(withPassword, new SoftwareAuthenticator())
          expect((yield* deletePasskey(withPassword, first.id)).status).toBe(204)
          expect((yield* listPasskeys(withPassword)).body).toEqual([])

          // Passkeys only: the second-last goes, the last one stays.
          const passkeysOnly = yield* signUp("pk-del-only")
          const one = yield* addPasskey(passkeysOnly, new SoftwareAuthenticator())
          const two = yield* addPasskey(passkeysOnly, new SoftwareAuthenticator())
          yield* withoutPassword(passkeysOnly)
          expect((yield* deletePasskey(passkeysOnly, one.id)).status).toBe(204)
          expectProblem(yield* deletePasskey(passkeysOnly, two.id), 400, "LastSignInMethodError")
          expect(((yield* listPasskeys(passkeysOnly)).body as Array<{ id: string }>).map((p) => p.id)).toEqual([two.id])

          // A linked provider is a way to sign in too.
          const linked = yield* signUp("pk-del-oauth")
          const only = yield* addPasskey(linked, new SoftwareAuthenticator())
          yield* withoutPassword(linked)
          expectProblem(yield* deletePasskey(linked, only.id), 400, "LastSignInMethodError")
          yield* Effect.flatMap(OAuthAccountRepo, (accounts) =>
            accounts.link({
              provider: "github",
              provider_user_id: `gh-${linked.userId}`,
              user_id: UserId.make(linked.userId),
              provider_email: Option.none(),
              access_token: Option.none(),
              refresh_token: Option.none(),
              expires_at: Option.none()
            })
          )
          expect((yield* deletePasskey(linked, only.id)).status).toBe(204)
        })
      )

      it.effect("a deleted passkey signs in no more", () =>
        Effect.gen(function* () {
          const session = yield* signUp("pk-deleted")
          const authenticator = new SoftwareAuthenticator()
          const { id } = yield* addPasskey(session, authenticator)
          expect((yield* deletePasskey(session, id)).status).toBe(204)
          expectProblem(yield* passkeySignIn(authenticator), 401, "AuthenticationError")
          expectProblem(yield* deletePasskey(session, id), 404, "NotFoundError")
        })
      )

      it.effect("authenticate/begin without a body and with a null body both work; unknown keys get 401", () =>
        Effect.gen(function* () {
          expect((yield* authenticateBegin()).status).toBe(200)
          const reply = yield* authenticateComplete({ challenge_key: "nope", credential: {} })
          expectProblem(reply, 422, "ValidationError")
        })
      )
    })
  })
}
