import { Data, DateTime, Duration, Effect, Option, type Redacted } from "effect"
import { type ChangeLink, decideLink, type PendingAddressChange, type VoidReason } from "../domain/AddressChange.js"
import { Actor } from "../domain/Audit.js"
import { AuthEvent } from "../domain/Events.js"
import {
  ReauthenticationRequiredError,
  TokenBlacklistedError,
  TokenError,
  TokenExpiredError,
  ValidationError
} from "../domain/errors.js"
import { FamilyId } from "../domain/Session.js"
import { type Email, normaliseLogin, type PublicUser, toPublicUser, type User } from "../domain/User.js"
import { WayInChange } from "../domain/WaysIn.js"
import { Audit } from "./Audit.js"
import { AuthPolicy } from "./AuthPolicy.js"
import { CurrentPassword } from "./CurrentPassword.js"
import { EvenAnswers } from "./EvenAnswers.js"
import { AddressChanges } from "./ports/AddressChanges.js"
import { Cryptography } from "./ports/Cryptography.js"
import { Events } from "./ports/Events.js"
import { RefreshTokenRepo } from "./ports/RefreshTokenRepo.js"
import { Transaction } from "./ports/Transaction.js"
import { UserRepo } from "./ports/UserRepo.js"
import { SecurityNotices } from "./SecurityNotices.js"
import { currentFamily, type Principal } from "./Sessions.js"
import { WaysIn } from "./WaysIn.js"
import { Webhooks } from "./Webhooks.js"

/** When a change request is answered, the new address free or taken (EvenAnswers). */
export const CHANGE_ANSWER_FLOOR = Duration.millis(20)

const unknownLink = new TokenError({
  message: "The link is not valid: it may have been cut short, or its change made."
})

/** A change that can no longer be made, told by why, in words its owner can act on. */
const voided = (reason: VoidReason | "used") =>
  reason === "expired"
    ? new TokenExpiredError({ message: "The link has expired. Ask for the change again." })
    : new TokenBlacklistedError({
        message:
          reason === "used"
            ? "The link has been used."
            : "The change was called off: the session that asked for it ended, or the account's password or sign-in methods changed. Ask for it again."
      })

/** What a used link answers: the other link is still awaited, or the account moved. */
export type LinkUsed = Data.TaggedEnum<{
  Awaiting: { readonly awaiting: ChangeLink }
  Moved: { readonly user: PublicUser }
}>
export const LinkUsed = Data.taggedEnum<LinkUsed>()

/**
 * Changing one's address (docs/behaviour.md, "Address change", domain/AddressChange.ts):
 * a signed-in user whose sign-in is recent asks, with the current password when the account has
 * one; the new address confirms by its link and a verified current address approves by its own.
 * The move is a change of the account's ways in: its version moves, every other session ends, and
 * the old address gets the undo link (AddressChangeUndo).
 */
export class AddressChange extends Effect.Service<AddressChange>()("app/AddressChange", {
  effect: Effect.gen(function* () {
    const users = yield* UserRepo
    const changes = yield* AddressChanges
    const families = yield* RefreshTokenRepo
    const events = yield* Events
    const webhooks = yield* Webhooks
    const crypto = yield* Cryptography
    const audit = yield* Audit
    const waysIn = yield* WaysIn
    const policy = yield* AuthPolicy
    const even = yield* EvenAnswers
    const notices = yield* SecurityNotices
    const currentPassword = yield* CurrentPassword
    const tx = yield* Transaction

    /**
     * Stores the change in place of any earlier one and mails its links: to the new address, and
     * to the current one when it was verified (an unverified one has nothing to approve with, and
     * gets a notice).
     */
    const ask = Effect.fnUntraced(function* (user: User, family: FamilyId, address: string) {
      const newToken = yield* crypto.randomSecret
      const approvalToken = user.is_verified ? Option.some(yield* crypto.randomSecret) : Option.none<string>()
      const now = yield* DateTime.now
      const confirmation = AuthEvent.send_email_change_email({ email: address, token: newToken })
      const approval = Option.map(approvalToken, (token) =>
        AuthEvent.send_email_change_approval_email({ email: user.email, token, new_email: address })
      )
      yield* tx.transaction(
        Effect.all(
          [
            changes.replace({
              user_id: user.id,
              new_email: address,
              family_id: family,
              credential_version: user.credential_version,
              new_token_digest: crypto.digest(newToken),
              current_token_digest: Option.getOrNull(Option.map(approvalToken, crypto.digest)),
              new_confirmed: false,
              current_confirmed: false,
              created_at: now,
              expires_at: DateTime.addDuration(now, Duration.minutes(policy.tokens.emailChangeExpireMinutes))
            }),
            audit.append({
              type: "email.change_requested",
              user_id: user.id,
              actor: Actor.user(user.id),
              details: { to: address, approval_asked: Option.isSome(approval) }
            }),
            webhooks.publishEvent(confirmation),
            Option.match(approval, { onNone: () => Effect.void, onSome: webhooks.publishEvent })
          ],
          { discard: true }
        )
      )
      yield* events.emit(confirmation)
      if (Option.isSome(approval)) yield* events.emit(approval.value)
      else yield* notices.tell(user.email, { kind: "email_change_requested", subject: address })
    })

    /**
     * Asks to move the caller's account to `newEmail`. A stolen access token is not enough: the
     * sign-in must be recent and, when the account has a password, the current one given (a missing
     * or wrong one answers as change-password does, and counts toward the lockout). The same 202
     * whether the address is free or taken, at CHANGE_ANSWER_FLOOR: a taken (or reserved) one gets
     * a notice of the attempt.
     */
    const request = Effect.fn("AddressChange.request")(function* (
      principal: Principal,
      newEmail: Email,
      given: Option.Option<Redacted.Redacted<string>>
    ) {
      yield* waysIn.requireRecentSignIn(principal)
      const family = currentFamily(principal)
      // A change ends with the session that asked: a token that names none has nothing to end it.
      if (Option.isNone(family)) {
        return yield* new ReauthenticationRequiredError({ maxAgeSeconds: policy.accounts.reauthMaxAgeSeconds })
      }
      const stored = principal.user.hashed_password
      if (Option.isSome(stored)) {
        yield* currentPassword.limit(principal)
        yield* currentPassword.check(principal, stored.value, given)
      }
      const address = normaliseLogin("email", newEmail)
      if (address === principal.user.email) {
        return yield* new ValidationError({
          message: "That is the account's address already.",
          errors: [{ path: "new_email", message: "is the current address" }]
        })
      }
      yield* even.atFloor(
        CHANGE_ANSWER_FLOOR,
        Effect.gen(function* () {
          const holder = yield* users.findByLogin("email", address)
          const reserved = yield* changes.reservedFor(address, yield* DateTime.now)
          const taken = Option.isSome(holder) || Option.exists(reserved, (owner) => owner !== principal.user.id)
          // A taken address's owner learns of the attempt; the asker learns nothing from the answer.
          return taken
            ? notices.tell(address, { kind: "email_change_attempted", subject: "" })
            : ask(principal.user, family.value, address)
        })
      )
    })

    /** Whether the session that asked is still live: its end ends the change. */
    const sessionLive = (pending: PendingAddressChange, now: DateTime.Utc) =>
      Effect.map(families.liveFamily(pending.user_id, FamilyId.make(pending.family_id), now), Option.isSome)

    /**
     * The last link: in one transaction, the change taken (once), the session that asked found
     * live, the account moved (its credential version compared with the request's) and the undo
     * stored; every other session ends. An address taken meanwhile leaves everything as it was (409).
     */
    const move = Effect.fnUntraced(function* (user: User, pending: PendingAddressChange) {
      const from = user.email
      const to = pending.new_email as Email
      const now = yield* DateTime.now
      const undoToken = user.is_verified ? Option.some(yield* crypto.randomSecret) : Option.none<string>()
      const undoMail = Option.map(undoToken, (token) =>
        AuthEvent.send_email_change_undo_email({ email: from, token, new_email: to })
      )
      const moved = yield* waysIn
        .change(
          user,
          WayInChange.EmailChanged({ from, to, undoable: Option.isSome(undoToken) }),
          Effect.gen(function* () {
            if (!(yield* changes.take(user.id, pending.new_token_digest))) return yield* voided("used")
            if (!(yield* sessionLive(pending, now))) return yield* voided("session_ended")
            const movedUser = yield* users.setEmail(user.id, to)
            if (Option.isSome(undoToken)) {
              yield* changes.putUndo({
                token_digest: crypto.digest(undoToken.value),
                user_id: user.id,
                old_email: from,
                new_email: to,
                changed_at: now,
                expires_at: DateTime.addDuration(now, Duration.days(policy.tokens.emailChangeUndoDays))
              })
            }
            return movedUser
          }),
          {
            actor: Actor.user(user.id),
            details: { from, to, undo_sent: Option.isSome(undoToken) },
            expectedVersion: pending.credential_version,
            caller: Option.some(FamilyId.make(pending.family_id)),
            ...(Option.isSome(undoMail) ? { event: undoMail.value } : {})
          }
        )
        .pipe(Effect.catchTag("CredentialsChangedError", () => Effect.fail(voided("credentials_changed"))))
      if (Option.isSome(undoMail)) yield* events.emit(undoMail.value)
      return LinkUsed.Moved({ user: toPublicUser(Option.getOrElse(moved, () => user)) })
    })

    /**
     * Uses one of a change's links (`/me/email/confirm` takes no session: the link is the proof).
     * The first of two answers which one is still awaited; the last makes the move. A change whose
     * session ended, whose account's ways in changed, or that expired is void, and is deleted.
     */
    const confirm = Effect.fn("AddressChange.confirm")(function* (token: string) {
      const digest = crypto.digest(token)
      const used = yield* changes.markUsed(digest)
      if (Option.isNone(used)) return yield* unknownLink
      const pending = used.value
      const link = pending.new_token_digest === digest ? "new" : "current"
      const now = yield* DateTime.now
      const account = yield* users.findById(pending.user_id)
      const decision = decideLink(pending, link, {
        now,
        account,
        sessionLive: yield* sessionLive(pending, now)
      })
      if (decision._tag === "Void") {
        yield* changes.take(pending.user_id, pending.new_token_digest)
        return yield* voided(decision.reason)
      }
      if (decision._tag === "Await") return LinkUsed.Awaiting({ awaiting: decision.awaiting })
      if (Option.isNone(account)) return yield* voided("account_gone")
      return yield* move(account.value, pending)
    })

    return { request, confirm } as const
  })
}) {}
