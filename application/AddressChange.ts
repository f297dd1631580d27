import { DateTime, Duration, Effect, Option } from "effect"
import { Actor } from "../domain/Audit.js"
import { AuthEvent } from "../domain/Events.js"
import { TokenBlacklistedError, TokenError, ValidationError } from "../domain/errors.js"
import { FamilyId } from "../domain/Session.js"
import { tokenWindow } from "../domain/Token.js"
import { type Email, normaliseLogin, toPublicUser, UserId } from "../domain/User.js"
import { WayInChange } from "../domain/WaysIn.js"
import { Audit } from "./Audit.js"
import { AuthPolicy } from "./AuthPolicy.js"
import { EvenAnswers } from "./EvenAnswers.js"
import { Cryptography } from "./ports/Cryptography.js"
import { Events } from "./ports/Events.js"
import { TokenSigner } from "./ports/TokenSigner.js"
import { UserRepo } from "./ports/UserRepo.js"
import { SecurityNotices } from "./SecurityNotices.js"
import { currentFamily, type Principal } from "./Sessions.js"
import { WaysIn } from "./WaysIn.js"
import { Webhooks } from "./Webhooks.js"

/** When a change request is answered, the new address free or taken (EvenAnswers). */
export const CHANGE_ANSWER_FLOOR = Duration.millis(20)

const spent = new TokenBlacklistedError({
  message: "The link has been used, or the account changed since it was mailed."
})

/**
 * Changing one's address (DECISIONS "Passwordless sign-in and address change"): a signed-in
 * user, whose sign-in is recent, asks; a link mailed to the new address confirms. The token names
 * the address, the session that asked and the credential version it saw, so that it works once
 * and no earlier change or takeover can be undone by it. The move is a change of the account's
 * ways in: its version moves, every other session ends, the old address is told.
 */
export class AddressChange extends Effect.Service<AddressChange>()("app/AddressChange", {
  effect: Effect.gen(function* () {
    const users = yield* UserRepo
    const signer = yield* TokenSigner
    const events = yield* Events
    const webhooks = yield* Webhooks
    const crypto = yield* Cryptography
    const audit = yield* Audit
    const waysIn = yield* WaysIn
    const policy = yield* AuthPolicy
    const even = yield* EvenAnswers
    const notices = yield* SecurityNotices

    const mail = Effect.fnUntraced(function* (principal: Principal, address: string) {
      const user = principal.user
      const token = yield* signer.sign({
        sub: user.id,
        type: "email_change",
        jti: yield* crypto.randomId,
        ...tokenWindow(yield* DateTime.now, Duration.minutes(policy.tokens.emailVerifyExpireMinutes)),
        email: address,
        ver: user.credential_version,
        family_id: Option.getOrNull(currentFamily(principal))
      })
      yield* audit.record({
        type: "email.change_requested",
        user_id: user.id,
        actor: Actor.user(user.id),
        details: { to: address }
      })
      const mail = AuthEvent.send_email_change_email({ email: address, token })
      // Nothing is stored for the mail: its webhook message commits alone.
      yield* webhooks.publishEvent(mail)
      yield* events.emit(mail)
      yield* notices.tell(user.email, { kind: "email_change_requested", subject: address })
    })

    /**
     * Mails a confirmation link to the new address and a notice to the current one; a taken
     * address gets a notice of the attempt instead. The same 202 either way, at
     * CHANGE_ANSWER_FLOOR.
     */
    const request = Effect.fn("AddressChange.request")(function* (principal: Principal, newEmail: Email) {
      yield* waysIn.requireRecentSignIn(principal)
      const address = normaliseLogin("email", newEmail)
      if (address === principal.user.email) {
        return yield* new ValidationError({
          message: "That is the account's address already.",
          errors: [{ path: "new_email", message: "is the current address" }]
        })
      }
      yield* even.atFloor(
        CHANGE_ANSWER_FLOOR,
        Effect.map(users.findByLogin("email", address), (found) =>
          // A taken address's owner learns of the attempt; the asker learns nothing from the answer.
          Option.isSome(found)
            ? notices.tell(address, { kind: "email_change_attempted", subject: "" })
            : mail(principal, address)
        )
      )
    })

    /**
     * Moves the account to the token's address, verified, in one transaction with its credential
     * version (compared with the token's) and the end of every session but the one that asked.
     * A registration of the address that won the race leaves everything as it was (409).
     */
    const confirm = Effect.fn("AddressChange.confirm")(function* (token: string) {
      const claims = yield* signer.verify(token, "email_change")
      if (claims.email === undefined || claims.ver === undefined) {
        return yield* new TokenError({ message: "The token names no address." })
      }
      const found = yield* users.findById(UserId.make(claims.sub))
      if (Option.isNone(found) || !found.value.is_active) {
        return yield* new TokenError({ message: "The token does not belong to an active account." })
      }
      const user = found.value
      if (user.credential_version !== claims.ver) return yield* spent
      const to = claims.email as Email
      const moved = yield* waysIn
        .change(user, WayInChange.EmailChanged({ from: user.email, to }), users.setEmail(user.id, to), {
          actor: Actor.user(user.id),
          details: { from: user.email, to },
          expectedVersion: claims.ver,
          caller: Option.map(Option.fromNullable(claims.family_id), FamilyId.make)
        })
        .pipe(Effect.catchTag("CredentialsChangedError", () => Effect.fail(spent)))
      return toPublicUser(Option.getOrElse(moved, () => user))
    })

    return { request, confirm } as const
  })
}) {}
