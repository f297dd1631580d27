import { describe, expect, layer } from "@effect/vitest"
import { Effect, Schema } from "effect"
import { decodeJwt } from "jose"
import { AuditLog } from "../../application/ports/AuditLog.js"
import { UserRepo } from "../../application/ports/UserRepo.js"
import { UserId } from "../../domain/User.js"
import { call, expectProblem, login, me, refresh, register, signIn, uniqueEmail } from "../support/flows.js"
import { makeOutbox } from "../support/Outbox.js"
import { addPasskey, passkeyEnv, passkeySignIn } from "../support/passkeys.js"
import { SoftwareAuthenticator } from "../support/SoftwareAuthenticator.js"
import * as TestApp from "../support/TestApp.js"

/**
 * Sign-in by a mailed link or code (docs/behaviour.md, "Sign-in by mail"), through
 * HTTP on every store: single use, voided by a newer request and by five wrong codes, the same
 * answer for every address, and the mail's proof of the address taking over an account its
 * registrant never proved.
 */

const typesFor = (userId: string) =>
  Effect.flatMap(AuditLog, (log) =>
    Effect.map(log.list({ user_id: UserId.make(userId), limit: 100 }), (entries) => entries.map((entry) => entry.type))
  )

const requestMail = (email: string, extra: Record<string, unknown> = {}) =>
  call("POST", "/email-sign-in/request", { json: { email, ...extra } })

const confirm = (body: Record<string, unknown>) => call("POST", "/email-sign-in/confirm", { json: body })

interface SignedIn {
  readonly access_token: string
  readonly refresh_token: string
  readonly user: { readonly id: string | number; readonly email: string; readonly is_verified: boolean }
}

/** Asserts a sign-in and answers its body. */
const signedIn = (reply: { readonly status: number; readonly body: unknown }) => {
  expect(reply.status).toBe(200)
  return reply.body as SignedIn
}

// Eight failures lock an address: five wrong codes void a request before they lock it.
const env = { ...passkeyEnv, SERVICE_EMAIL_SIGN_IN_ENABLED: "true", SERVICE_MAX_LOGIN_ATTEMPTS: "8" }

for (const backend of TestApp.backendsWithFile()) {
  describe(`email sign-in (${backend.name})`, () => {
    const outbox = makeOutbox()
    layer(TestApp.layer(backend, env, { deployment: { events: outbox.handlers } }), { excludeTestServices: true })(
      (it) => {
        /** A registered address with a sign-in mail pending: the address, its mail, and a code that is not its. */
        const pending = (label: string) =>
          Effect.gen(function* () {
            const email = uniqueEmail(label)
            expect((yield* register(email)).status).toBe(202)
            expect((yield* requestMail(email)).status).toBe(202)
            const mail = yield* outbox.signInMail(email)
            return { email, mail, wrong: mail.code === "000000" ? "111111" : "000000" }
          })

        /** `times` wrong codes for `email`, each refused alike. */
        const guess = (email: string, wrong: string, times: number) =>
          Effect.forEach(
            Array.from({ length: times }),
            () => Effect.map(confirm({ email, code: wrong }), (reply) => expectProblem(reply, 400, "SignInCodeError")),
            { discard: true }
          )

        it.effect("a mailed link signs a known account in once; a second use is refused", () =>
          Effect.gen(function* () {
            const email = uniqueEmail("link")
            expect((yield* register(email)).status).toBe(202)
            const reply = yield* requestMail(email)
            expect(reply.status).toBe(202)
            const mail = yield* outbox.signInMail(email)
            expect(mail.signUp).toBe(false)
            expect(mail.code).toMatch(/^[0-9]{6}$/)

            const body = signedIn(yield* confirm({ token: mail.token }))
            expect(body.user.email).toBe(email)
            expect(body.user.is_verified).toBe(true)
            expect((yield* me(body.access_token)).status).toBe(200)
            expect(decodeJwt(body.access_token).auth_time).toEqual(expect.any(Number))

            expectProblem(yield* confirm({ token: mail.token }), 401, "TokenError")
            // Nor does its code work once the link has been used.
            expectProblem(yield* confirm({ email, code: mail.code }), 400, "SignInCodeError")
            const types = yield* typesFor(String(body.user.id))
            expect(types).toEqual(expect.arrayContaining(["email_sign_in.requested", "sign_in.succeeded"]))
          })
        )

        it.effect("the mailed code signs in once, with the address in any case", () =>
          Effect.gen(function* () {
            const { email, mail } = yield* pending("code")
            const body = signedIn(yield* confirm({ email: email.toUpperCase(), code: mail.code }))
            expect(body.user.email).toBe(email)
            expectProblem(yield* confirm({ email, code: mail.code }), 400, "SignInCodeError")
            expectProblem(yield* confirm({ token: mail.token }), 401, "TokenError")
          })
        )

        it.effect("five wrong codes void the request: the right one is refused after them", () =>
          Effect.gen(function* () {
            const { email, mail, wrong } = yield* pending("guess")
            yield* guess(email, wrong, 5)
            expectProblem(yield* confirm({ email, code: mail.code }), 400, "SignInCodeError")
            expectProblem(yield* confirm({ token: mail.token }), 401, "TokenError")
          })
        )

        it.effect("wrong codes count toward the address's lockout with wrong passwords", () =>
          Effect.gen(function* () {
            const { email, wrong } = yield* pending("locked")
            yield* guess(email, wrong, 5)
            for (let attempt = 0; attempt < 3; attempt++) {
              expectProblem(yield* login(email, "not the password"), 401, "AuthenticationError")
            }
            expectProblem(yield* login(email), 423, "AccountLockedError")
            expect((yield* requestMail(email)).status).toBe(202)
            const next = yield* outbox.signInMail(email, 2)
            expectProblem(yield* confirm({ email, code: next.code }), 423, "AccountLockedError")
          })
        )

        it.effect("four wrong codes leave the request; the right code then signs in", () =>
          Effect.gen(function* () {
            const { email, mail, wrong } = yield* pending("typo")
            yield* guess(email, wrong, 4)
            signedIn(yield* confirm({ email, code: mail.code }))
          })
        )

        it.effect("a newer request voids the older one's link and code", () =>
          Effect.gen(function* () {
            const email = uniqueEmail("newer")
            expect((yield* register(email)).status).toBe(202)
            expect((yield* requestMail(email)).status).toBe(202)
            const first = yield* outbox.signInMail(email, 1)
            expect((yield* requestMail(email)).status).toBe(202)
            const second = yield* outbox.signInMail(email, 2)
            expectProblem(yield* confirm({ token: first.token }), 401, "TokenError")
            if (first.code !== second.code) {
              expectProblem(yield* confirm({ email, code: first.code }), 400, "SignInCodeError")
            }
            signedIn(yield* confirm({ token: second.token }))
          })
        )

        it.effect("an unknown address gets the same 202 and no mail, and no account, with sign-up off", () =>
          Effect.gen(function* () {
            const email = uniqueEmail("nobody")
            const reply = yield* requestMail(email)
            expect(reply.status).toBe(202)
            const known = uniqueEmail("somebody")
            expect((yield* register(known)).status).toBe(202)
            const knownReply = yield* requestMail(known)
            expect(knownReply.body).toEqual(reply.body)
            expect(yield* outbox.count("send_sign_in_email", email)).toBe(0)
            expect(yield* outbox.count("send_sign_in_email", known)).toBe(1)
            // A guessed code for it is refused as a wrong one is: nothing tells it has no account.
            expectProblem(yield* confirm({ email, code: "123456" }), 400, "SignInCodeError")
            expectProblem(yield* login(email), 401, "AuthenticationError")
            // Registration fields are no part of the request while sign-up is off.
            expectProblem(yield* requestMail(email, { nickname: "x" }), 422, "ValidationError")
          })
        )

        it.effect("an inactive account gets no mail, and a link mailed before it was deactivated signs nobody in", () =>
          Effect.gen(function* () {
            const email = uniqueEmail("inactive")
            expect((yield* register(email)).status).toBe(202)
            const session = yield* signIn(email)
            expect((yield* requestMail(email)).status).toBe(202)
            const mail = yield* outbox.signInMail(email)
            yield* Effect.flatMap(UserRepo, (users) =>
              users.setFlags(UserId.make(session.userId), { is_active: false })
            )
            expect((yield* requestMail(email)).status).toBe(202)
            expect(yield* outbox.count("send_sign_in_email", email)).toBe(1)
            expectProblem(yield* confirm({ token: mail.token }), 401, "TokenError")
          })
        )

        it.effect("a link reaching a never-verified account removes the squatter's password and passkey", () =>
          Effect.gen(function* () {
            const victim = uniqueEmail("victim")
            expect((yield* register(victim)).status).toBe(202)
            const squatter = yield* signIn(victim)
            const authenticator = new SoftwareAuthenticator()
            yield* addPasskey(squatter, authenticator)

            expect((yield* requestMail(victim)).status).toBe(202)
            const mail = yield* outbox.signInMail(victim)
            const owner = signedIn(yield* confirm({ token: mail.token }))
            expect(owner.user.is_verified).toBe(true)

            expectProblem(yield* passkeySignIn(authenticator), 401, "AuthenticationError")
            expectProblem(yield* login(victim), 401, "AuthenticationError")
            expect((yield* me(squatter.access)).status).toBe(401)
            expect((yield* refresh(squatter.refresh)).status).toBe(401)
            expect((yield* me(owner.access_token)).status).toBe(200)
            const types = yield* typesFor(String(owner.user.id))
            expect(types).toEqual(
              expect.arrayContaining([
                "takeover.password_cleared",
                "takeover.passkey_removed",
                "takeover.sessions_ended",
                "sign_in.succeeded"
              ])
            )
          })
        )

        it.effect("a link reaching a verified account keeps its password and sessions", () =>
          Effect.gen(function* () {
            const email = uniqueEmail("verified")
            expect((yield* register(email)).status).toBe(202)
            const verifyToken = yield* outbox.token("send_verification_email", email)
            expect((yield* call("POST", "/verify-email/confirm", { json: { token: verifyToken } })).status).toBe(200)
            const session = yield* signIn(email)
            expect((yield* requestMail(email)).status).toBe(202)
            const mail = yield* outbox.signInMail(email)
            signedIn(yield* confirm({ email, code: mail.code }))
            expect((yield* me(session.access)).status).toBe(200)
            expect((yield* login(email)).status).toBe(200)
            expect((yield* typesFor(session.userId)).filter((type) => type.startsWith("takeover."))).toEqual([])
          })
        )

        it.effect("two confirmations of one link racing start one session", () =>
          Effect.gen(function* () {
            const email = uniqueEmail("race")
            expect((yield* register(email)).status).toBe(202)
            expect((yield* requestMail(email)).status).toBe(202)
            const mail = yield* outbox.signInMail(email)
            const replies = yield* Effect.all(
              Array.from({ length: 6 }, () => confirm({ token: mail.token })),
              { concurrency: "unbounded" }
            )
            expect(replies.filter((reply) => reply.status === 200)).toHaveLength(1)
            for (const reply of replies.filter((reply) => reply.status !== 200)) {
              expectProblem(reply, 401, "TokenError")
            }
            const winner = signedIn(replies.find((reply) => reply.status === 200) ?? { status: 0, body: null })
            const sessions = yield* call("GET", "/sessions", { token: winner.access_token })
            // The registrant's password sign-in was ended by the takeover; the link's is the one session.
            expect(sessions.body).toHaveLength(1)
          })
        )

        it.effect("the code and the link's shape are checked before anything counts", () =>
          Effect.gen(function* () {
            expectProblem(yield* confirm({ email: uniqueEmail("shape"), code: "12345" }), 422, "ValidationError")
            expectProblem(yield* confirm({ token: "x", code: "123456" }), 422, "ValidationError")
            expectProblem(yield* confirm({}), 422, "ValidationError")
            expectProblem(yield* requestMail("not an address"), 422, "ValidationError")
          })
        )
      }
    )
  })

  describe(`email sign-up with registration fields (${backend.name})`, () => {
    const outbox = makeOutbox()
    const deployment = {
      events: outbox.handlers,
      userFields: {
        display_name: Schema.Trim.pipe(Schema.minLength(1), Schema.maxLength(40)),
        age: Schema.Int.pipe(Schema.between(0, 150))
      },
      registration: { require: ["display_name"], accept: ["age"] }
    }
    layer(TestApp.layer(backend, { ...env, SERVICE_EMAIL_SIGN_UP_ENABLED: "true" }, { deployment }), {
      excludeTestServices: true
    })((it) => {
      it.effect("the fields given with the request are the new account's; bad ones are refused for every address", () =>
        Effect.gen(function* () {
          const email = uniqueEmail("fields")
          expect((yield* requestMail(email, { display_name: "  Ada  ", age: 36 })).status).toBe(202)
          const mail = yield* outbox.signInMail(email)
          const body = signedIn(yield* confirm({ email, code: mail.code }))
          expect(body.user).toMatchObject({ email, display_name: "Ada", age: 36 })

          // Refused alike whether or not the address has an account: the answer tells nothing.
          for (const address of [email, uniqueEmail("unknown")]) {
            expectProblem(yield* requestMail(address, { age: 36 }), 422, "ValidationError")
            expectProblem(yield* requestMail(address, { display_name: "Bo", age: 400 }), 422, "ValidationError")
            expectProblem(yield* requestMail(address, { display_name: "Bo", tier: "pro" }), 422, "ValidationError")
          }
        })
      )
    })
  })

  describe(`email sign-up (${backend.name})`, () => {
    const outbox = makeOutbox()
    layer(
      TestApp.layer(
        backend,
        { ...env, SERVICE_EMAIL_SIGN_UP_ENABLED: "true" },
        { deployment: { events: outbox.handlers } }
      ),
      { excludeTestServices: true }
    )((it) => {
      it.effect("an unknown address gets an account without a password, then adds a passkey and signs in with it", () =>
        Effect.gen(function* () {
          const email = uniqueEmail("new")
          expect((yield* requestMail(email)).status).toBe(202)
          const mail = yield* outbox.signInMail(email)
          expect(mail.signUp).toBe(true)
          // Nothing exists before the confirmation.
          expectProblem(yield* login(email), 401, "AuthenticationError")

          const body = signedIn(yield* confirm({ token: mail.token }))
          expect(body.user.email).toBe(email)
          expect(body.user.is_verified).toBe(true)
          yield* outbox.next("after_register", email)
          expectProblem(yield* login(email), 401, "AuthenticationError")

          const session = {
            email,
            access: body.access_token,
            refresh: body.refresh_token,
            userId: String(body.user.id),
            id: body.user.id
          }
          const authenticator = new SoftwareAuthenticator()
          yield* addPasskey(session, authenticator)
          const passkeyBody = signedIn(yield* passkeySignIn(authenticator))
          expect(passkeyBody.user.id).toEqual(body.user.id)
          // The passkey is the account's one way in: it cannot be deleted.
          const passkeys = (yield* call("GET", "/passkeys", { token: body.access_token })).body as ReadonlyArray<{
            id: string
          }>
          expectProblem(
            yield* call("DELETE", `/passkeys/${passkeys[0]?.id}`, { token: body.access_token }),
            400,
            "LastSignInMethodError"
          )
        })
      )

      it.effect("a registration racing the confirmation of a sign-up: the mail's proof wins the account", () =>
        Effect.gen(function* () {
          const email = uniqueEmail("raced")
          expect((yield* requestMail(email)).status).toBe(202)
          const mail = yield* outbox.signInMail(email)
          // Someone registers the address with a password before the link is followed.
          expect((yield* register(email)).status).toBe(202)
          const squatter = yield* signIn(email)
          const body = signedIn(yield* confirm({ token: mail.token }))
          expect(String(body.user.id)).toBe(squatter.userId)
          expectProblem(yield* login(email), 401, "AuthenticationError")
          expect((yield* me(squatter.access)).status).toBe(401)
        })
      )
    })
  })
}
