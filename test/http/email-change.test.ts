import { describe, expect, layer } from "@effect/vitest"
import { Effect } from "effect"
import { AuditLog } from "../../application/ports/AuditLog.js"
import { UserId } from "../../domain/User.js"
import {
  call,
  expectProblem,
  login,
  me,
  password,
  register,
  type Session,
  signIn,
  uniqueEmail
} from "../support/flows.js"
import { makeOutbox } from "../support/Outbox.js"
import * as TestApp from "../support/TestApp.js"

/**
 * Changing one's address (docs/behaviour.md, "Address change"), through HTTP on
 * every store: asked with a recent sign-in and the current password; the new address confirms and
 * a verified current address approves, in either order; the change ends with the session that
 * asked and with a password change or reset; the old address can undo it; a taken or reserved
 * address learns of the attempt and nothing moves.
 */

const typesFor = (userId: string) =>
  Effect.flatMap(AuditLog, (log) =>
    Effect.map(log.list({ user_id: UserId.make(userId), limit: 100 }), (entries) => entries.map((entry) => entry.type))
  )

const ask = (access: string, newEmail: string, current: string | null = password) =>
  call("POST", "/me/email", {
    token: access,
    json: current === null ? { new_email: newEmail } : { new_email: newEmail, current_password: current }
  })

const confirm = (token: string) => call("POST", "/me/email/confirm", { json: { token } })
const undo = (token: string) => call("POST", "/me/email/undo", { json: { token } })
const emailOf = (reply: { readonly body: unknown }) => (reply.body as { email: string }).email
const familyOf = (access: string) =>
  (JSON.parse(Buffer.from(access.split(".")[1] ?? "", "base64url").toString("utf8")) as { family_id: string }).family_id

interface Change {
  readonly email: string
  readonly newEmail: string
  readonly asker: Session
  readonly newLink: string
  readonly currentLink: string
}

for (const backend of TestApp.backendsWithFile()) {
  describe(`address change (${backend.name})`, () => {
    const outbox = makeOutbox()

    /** A registered account whose address was verified by its mailed link. */
    const verifiedAccount = (label: string) =>
      Effect.gen(function* () {
        const email = uniqueEmail(label)
        expect((yield* register(email)).status).toBe(202)
        const token = yield* outbox.token("send_verification_email", email)
        expect((yield* call("POST", "/verify-email/confirm", { json: { token } })).status).toBe(200)
        return email
      })

    /** A change asked by a new session of a verified account: its two links' tokens. */
    const askedChange = (label: string) =>
      Effect.gen(function* () {
        const email = yield* verifiedAccount(label)
        const asker = yield* signIn(email)
        const newEmail = uniqueEmail(`${label}-new`)
        expect((yield* ask(asker.access, newEmail)).status).toBe(202)
        return {
          email,
          newEmail,
          asker,
          newLink: yield* outbox.token("send_email_change_email", newEmail),
          currentLink: yield* outbox.token("send_email_change_approval_email", email)
        }
      })

    layer(TestApp.layer(backend, {}, { deployment: { events: outbox.handlers } }), { excludeTestServices: true })(
      (it) => {
        it.effect("an unverified address: the new address's link alone moves the account, verified, once", () =>
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
            expect(yield* outbox.count("send_email_change_approval_email", email)).toBe(0)
            expect(emailOf(yield* me(asker.access))).toBe(email)

            const moved = yield* confirm(token)
            expect(moved.status).toBe(200)
            expect(moved.body).toMatchObject({ email: newEmail, is_verified: true })
            expect((yield* me(asker.access)).status).toBe(200)
            expect((yield* me(other.access)).status).toBe(401)
            expectProblem(yield* login(email), 401, "AuthenticationError")
            expect((yield* login(newEmail)).status).toBe(200)
            const [, changed] = yield* outbox.next("send_security_notice", email, 2)
            expect(changed).toMatchObject({ kind: "email_changed", subject: newEmail })
            // No undo link for an address that never proved itself.
            expect(yield* outbox.count("send_email_change_undo_email", email)).toBe(0)

            expectProblem(yield* confirm(token), 401, "TokenError")
            expect(yield* typesFor(asker.userId)).toEqual(
              expect.arrayContaining(["email.change_requested", "email.change_confirmed"])
            )
          })
        )

        it.effect("a verified address must approve: the new address's link alone moves nothing", () =>
          Effect.gen(function* () {
            const { email, newEmail, asker, newLink, currentLink } = yield* askedChange("approve")
            const first = yield* confirm(newLink)
            expect(first.status).toBe(202)
            expect(first.body).toMatchObject({ awaiting: "current" })
            // Used again while the other is awaited: still awaited, still not moved.
            expect((yield* confirm(newLink)).body).toMatchObject({ awaiting: "current" })
            expect(emailOf(yield* me(asker.access))).toBe(email)
            expect((yield* login(email)).status).toBe(200)

            const last = yield* confirm(currentLink)
            expect(last.status).toBe(200)
            expect(last.body).toMatchObject({ email: newEmail, is_verified: true })
            expect(emailOf(yield* me(asker.access))).toBe(newEmail)
            // The old address's notice is its undo link, not a second mail.
            const [, , movedTo] = yield* outbox.next("send_email_change_undo_email", email)
            expect(movedTo).toBe(newEmail)
            expect(yield* outbox.count("send_security_notice", email)).toBe(0)
            expectProblem(yield* confirm(currentLink), 401, "TokenError")
          })
        )

        it.effect("the links in the other order: the current address first, then the new one", () =>
          Effect.gen(function* () {
            const { newEmail, asker, newLink, currentLink } = yield* askedChange("order")
            const first = yield* confirm(currentLink)
            expect(first.status).toBe(202)
            expect(first.body).toMatchObject({ awaiting: "new" })
            expect((yield* confirm(newLink)).status).toBe(200)
            expect(emailOf(yield* me(asker.access))).toBe(newEmail)
          })
        )

        it.effect("the current password is required: missing or wrong answers 400 and mails nothing", () =>
          Effect.gen(function* () {
            const email = yield* verifiedAccount("proof")
            const session = yield* signIn(email)
            const newEmail = uniqueEmail("proof-new")
            expectProblem(yield* ask(session.access, newEmail, null), 400, "AuthenticationError")
            expectProblem(yield* ask(session.access, newEmail, "not the password"), 400, "AuthenticationError")
            expect(yield* outbox.count("send_email_change_email", newEmail)).toBe(0)
            expect(yield* outbox.count("send_email_change_approval_email", email)).toBe(0)
            expect(yield* typesFor(session.userId)).not.toContain("email.change_requested")
          })
        )

        it.effect("a taken address gets a notice of the attempt and the same 202; nothing moves", () =>
          Effect.gen(function* () {
            const email = uniqueEmail("mover")
            const taken = uniqueEmail("taken")
            expect((yield* register(email)).status).toBe(202)
            expect((yield* register(taken)).status).toBe(202)
            const session = yield* signIn(email)
            expect((yield* ask(session.access, taken)).status).toBe(202)
            const [, attempted] = yield* outbox.next("send_security_notice", taken)
            expect(attempted).toMatchObject({ kind: "email_change_attempted" })
            expect(yield* outbox.count("send_email_change_email", taken)).toBe(0)
            expect(emailOf(yield* me(session.access))).toBe(email)
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
            expect(emailOf(yield* me(asker.access))).toBe(email)
            expect((yield* me(other.access)).status).toBe(200)
            expect((yield* login(email)).status).toBe(200)
            expect(yield* typesFor(asker.userId)).not.toContain("email.change_confirmed")
          })
        )

        /** A change asked, half confirmed, then `end`ed: its last link moves nothing. */
        const calledOff = (
          name: string,
          end: (change: Change) => Effect.Effect<void, never, TestApp.TestApp>,
          code = "TokenBlacklistedError"
        ) =>
          it.effect(`a pending change ends with ${name}`, () =>
            Effect.gen(function* () {
              const change = yield* askedChange("ended")
              expect((yield* confirm(change.newLink)).status).toBe(202)
              yield* end(change)
              expectProblem(yield* confirm(change.currentLink), 401, code)
              // Void for good: the link was deleted with its change.
              expectProblem(yield* confirm(change.currentLink), 401, "TokenError")
              expect((yield* login(change.newEmail)).status).toBe(401)
              expect(yield* typesFor(change.asker.userId)).not.toContain("email.change_confirmed")
            })
          )

        calledOff("the sign-out of the session that asked", ({ asker }) =>
          Effect.map(call("POST", "/logout", { token: asker.access }), (reply) => expect(reply.status).toBe(204))
        )
        calledOff("that session deleted from another", ({ email, asker }) =>
          Effect.gen(function* () {
            const other = yield* signIn(email)
            const path = `/sessions/${encodeURIComponent(familyOf(asker.access))}`
            expect((yield* call("DELETE", path, { token: other.access })).status).toBe(204)
          })
        )
        calledOff("revoke-others from another session", ({ email }) =>
          Effect.gen(function* () {
            const other = yield* signIn(email)
            expect((yield* call("POST", "/sessions/revoke-others", { token: other.access })).status).toBe(200)
          })
        )
        calledOff("a password change, even from the session that asked", ({ asker }) =>
          Effect.gen(function* () {
            const changed = yield* call("POST", "/change-password", {
              token: asker.access,
              json: { current_password: password, new_password: "a new passphrase of mine" }
            })
            expect(changed.status).toBe(200)
            expect((yield* me(asker.access)).status).toBe(200)
          })
        )
        calledOff("a password reset", ({ email }) =>
          Effect.gen(function* () {
            expect((yield* call("POST", "/password-reset/request", { json: { email } })).status).toBe(202)
            const token = yield* outbox.token("send_password_reset_email", email)
            const reset = yield* call("POST", "/password-reset/confirm", {
              json: { token, new_password: "a new passphrase of mine" }
            })
            expect(reset.status).toBe(200)
          })
        )
        // The change goes with its account: its links are unknown from then on.
        calledOff(
          "the account's deletion and a new account of the address",
          ({ asker, email }) =>
            Effect.gen(function* () {
              expect((yield* call("DELETE", "/me", { token: asker.access })).status).toBe(204)
              expect((yield* register(email)).status).toBe(202)
            }),
          "TokenError"
        )

        it.effect("a newer request voids the earlier one's links", () =>
          Effect.gen(function* () {
            const { asker, newLink, currentLink, email } = yield* askedChange("newer")
            const later = uniqueEmail("newer-later")
            expect((yield* ask(asker.access, later)).status).toBe(202)
            // The answer comes at a floor, its work perhaps still running (EvenAnswers): the newer
            // request's mail tells that it is stored.
            const laterLink = yield* outbox.token("send_email_change_email", later)
            expectProblem(yield* confirm(newLink), 401, "TokenError")
            expectProblem(yield* confirm(currentLink), 401, "TokenError")
            expect((yield* confirm(laterLink)).status).toBe(202)
            const approval = yield* outbox.token("send_email_change_approval_email", email, 2)
            expect((yield* confirm(approval)).status).toBe(200)
            expect(emailOf(yield* me(asker.access))).toBe(later)
          })
        )

        it.effect("the undo link brings the account back and ends whatever the mover held", () =>
          Effect.gen(function* () {
            const { email, newEmail, asker, newLink, currentLink } = yield* askedChange("undo")
            expect((yield* confirm(newLink)).status).toBe(202)
            expect((yield* confirm(currentLink)).status).toBe(200)
            const undoToken = yield* outbox.token("send_email_change_undo_email", email)
            // Meanwhile the old address is reserved: nobody registers it, or moves to it.
            const squatter = yield* signIn(yield* verifiedAccount("squatter"))
            expect((yield* register(email)).status).toBe(202)
            expectProblem(yield* login(email), 401, "AuthenticationError")
            expect((yield* ask(squatter.access, email)).status).toBe(202)
            const [, attempted] = yield* outbox.next("send_security_notice", email)
            expect(attempted).toMatchObject({ kind: "email_change_attempted" })
            expect(yield* outbox.count("send_email_change_email", email)).toBe(0)

            const restored = yield* undo(undoToken)
            expect(restored.status).toBe(200)
            expect(restored.body).toMatchObject({ email })
            // Every session ends, the password is cleared: sign-in by password fails at either address.
            expect((yield* me(asker.access)).status).toBe(401)
            expectProblem(yield* login(email), 401, "AuthenticationError")
            expectProblem(yield* login(newEmail), 401, "AuthenticationError")
            const [, told] = yield* outbox.next("send_security_notice", email, 2)
            expect(told).toMatchObject({ kind: "email_change_undone" })
            expectProblem(yield* undo(undoToken), 401, "TokenError")
            expect(yield* typesFor(asker.userId)).toContain("email.change_undone")

            // The owner takes the account back by a reset to the restored address.
            expect((yield* call("POST", "/password-reset/request", { json: { email } })).status).toBe(202)
            const reset = yield* outbox.token("send_password_reset_email", email)
            const newPassword = "my own passphrase again"
            const confirmed = yield* call("POST", "/password-reset/confirm", {
              json: { token: reset, new_password: newPassword }
            })
            expect(confirmed.status).toBe(200)
            expect((yield* login(email, newPassword)).status).toBe(200)
            // The address the account moved to is free again.
            expect((yield* register(newEmail)).status).toBe(202)
            expect((yield* login(newEmail)).status).toBe(200)
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
            expectProblem(yield* undo("not a token"), 401, "TokenError")
          })
        )
      }
    )
  })
}
