import { describe, expect, layer } from "@effect/vitest"
import { Effect } from "effect"
import { AuditLog } from "../../application/ports/AuditLog.js"
import { UserId } from "../../domain/User.js"
import { call, expectProblem, login, me, register, signIn, uniqueEmail } from "../support/flows.js"
import { makeOutbox } from "../support/Outbox.js"
import * as TestApp from "../support/TestApp.js"

/**
 * Changing one's address (DECISIONS "Passwordless sign-in and address change"), through HTTP on
 * every store: a link to the new address moves the account once, verified, ending every other
 * session; the old address is told; a taken address learns of the attempt and nothing moves.
 */

const typesFor = (userId: string) =>
  Effect.flatMap(AuditLog, (log) =>
    Effect.map(log.list({ user_id: UserId.make(userId), limit: 100 }), (entries) => entries.map((entry) => entry.type))
  )

const ask = (access: string, newEmail: string) =>
  call("POST", "/me/email", { token: access, json: { new_email: newEmail } })

const confirm = (token: string) => call("POST", "/me/email/confirm", { json: { token } })

for (const backend of TestApp.backendsWithFile()) {
  describe(`address change (${backend.name})`, () => {
    const outbox = makeOutbox()
    layer(TestApp.layer(backend, {}, { deployment: { events: outbox.handlers } }), { excludeTestServices: true })(
      (it) => {
        it.effect("a link mailed to the new address moves the account once, verified, ending the other sessions", () =>
          Effect.gen(function* () {
            const email = uniqueEmail("old")
            expect((yield* register(email)).status).toBe(202)
            const asker = yield* signIn(email)
            const other = yield* signIn(email)
            const newEmail = uniqueEmail("new")
            expect((yield* ask(asker.access, newEmail.toUpperCase())).status).toBe(202)
            const token = yield* outbox.token("send_email_change_email", newEmail)
            const [, requested] = yield* outbox.next("send_security_notice", email)
            expect(requested).toMatchObject({ kind: "email_change_requested", subject: newEmail })
            // Nothing moves before the confirmation.
            expect(((yield* me(asker.access)).body as { email: string }).email).toBe(email)

            const moved = yield* confirm(token)
            expect(moved.status).toBe(200)
            expect(moved.body).toMatchObject({ email: newEmail, is_verified: true })
            expect((yield* me(asker.access)).status).toBe(200)
            expect((yield* me(other.access)).status).toBe(401)
            expectProblem(yield* login(email), 401, "AuthenticationError")
            expect((yield* login(newEmail)).status).toBe(200)
            const [, changed] = yield* outbox.next("send_security_notice", email, 2)
            expect(changed).toMatchObject({ kind: "email_changed", subject: newEmail })

            // The link works once.
            expectProblem(yield* confirm(token), 401, "TokenBlacklistedError")
            expect(yield* typesFor(asker.userId)).toEqual(
              expect.arrayContaining(["email.change_requested", "email.changed"])
            )
          })
        )

        it.effect("a taken address gets a notice of the attempt and the same 202; nothing moves", () =>
          Effect.gen(function* () {
            const email = uniqueEmail("mover")
            const taken = uniqueEmail("taken")
            expect((yield* register(email)).status).toBe(202)
            expect((yield* register(taken)).status).toBe(202)
            const session = yield* signIn(email)
            const reply = yield* ask(session.access, taken)
            expect(reply.status).toBe(202)
            const [, attempted] = yield* outbox.next("send_security_notice", taken)
            expect(attempted).toMatchObject({ kind: "email_change_attempted" })
            expect(yield* outbox.count("send_email_change_email", taken)).toBe(0)
            expect(((yield* me(session.access)).body as { email: string }).email).toBe(email)
          })
        )

        it.effect("an address registered while the link waits: 409, and nothing changes", () =>
          Effect.gen(function* () {
            const email = uniqueEmail("racer")
            expect((yield* register(email)).status).toBe(202)
            const asker = yield* signIn(email)
            const other = yield* signIn(email)
            const newEmail = uniqueEmail("contested")
            expect((yield* ask(asker.access, newEmail)).status).toBe(202)
            const token = yield* outbox.token("send_email_change_email", newEmail)
            expect((yield* register(newEmail)).status).toBe(202)

            expectProblem(yield* confirm(token), 409, "UserAlreadyExistsError")
            expect(((yield* me(asker.access)).body as { email: string }).email).toBe(email)
            expect((yield* me(other.access)).status).toBe(200)
            expect((yield* login(email)).status).toBe(200)
            expect(yield* typesFor(asker.userId)).not.toContain("email.changed")
          })
        )

        it.effect("a confirmation racing a registration of the address: one of them has it", () =>
          Effect.gen(function* () {
            const email = uniqueEmail("both")
            expect((yield* register(email)).status).toBe(202)
            const asker = yield* signIn(email)
            const newEmail = uniqueEmail("raced")
            expect((yield* ask(asker.access, newEmail)).status).toBe(202)
            const token = yield* outbox.token("send_email_change_email", newEmail)
            const [moved] = yield* Effect.all([confirm(token), register(newEmail)], { concurrency: "unbounded" })
            const holder = ((yield* me(asker.access)).body as { email: string }).email
            if (moved.status === 200) {
              expect(holder).toBe(newEmail)
              // The registration that lost made no account: the address signs in to the one that moved.
              const signedIn = (yield* login(newEmail)).body as { user: { id: string | number } }
              expect(String(signedIn.user.id)).toBe(asker.userId)
            } else {
              expectProblem(moved, 409, "UserAlreadyExistsError")
              expect(holder).toBe(email)
            }
          })
        )

        it.effect("a password change after the request spends the link", () =>
          Effect.gen(function* () {
            const email = uniqueEmail("spent")
            expect((yield* register(email)).status).toBe(202)
            const session = yield* signIn(email)
            const newEmail = uniqueEmail("later")
            expect((yield* ask(session.access, newEmail)).status).toBe(202)
            const token = yield* outbox.token("send_email_change_email", newEmail)
            const changed = yield* call("POST", "/change-password", {
              token: session.access,
              json: { current_password: "correct horse battery staple", new_password: "a new passphrase of mine" }
            })
            expect(changed.status).toBe(200)
            expectProblem(yield* confirm(token), 401, "TokenBlacklistedError")
          })
        )

        it.effect("the current address and a malformed one are refused", () =>
          Effect.gen(function* () {
            const email = uniqueEmail("same")
            expect((yield* register(email)).status).toBe(202)
            const session = yield* signIn(email)
            expectProblem(yield* ask(session.access, email.toUpperCase()), 422, "ValidationError")
            expectProblem(yield* ask(session.access, "not an address"), 422, "ValidationError")
            expect((yield* call("POST", "/me/email", { json: { new_email: uniqueEmail("x") } })).status).toBe(401)
            expectProblem(yield* confirm("not a token"), 401, "TokenError")
          })
        )
      }
    )
  })
}
