import { DateTime, Duration, Effect, Option, type Redacted } from "effect"
import { Actor } from "../domain/Audit.js"
import { AuthEvent } from "../domain/Events.js"
import { TokenBlacklistedError, TokenError } from "../domain/errors.js"
import { checkPassword } from "../domain/Password.js"
import { tokenWindow } from "../domain/Token.js"
import { normaliseLogin, toPublicUser, type User, UserId } from "../domain/User.js"
import { WayInChange } from "../domain/WaysIn.js"
import { AuthPolicy } from "./AuthPolicy.js"
import { EvenAnswers } from "./EvenAnswers.js"
import { Cryptography } from "./ports/Cryptography.js"
import { Events } from "./ports/Events.js"
import { PasswordHasher } from "./ports/PasswordHasher.js"
import { TokenSigner } from "./ports/TokenSigner.js"
import { UserRepo } from "./ports/UserRepo.js"
import { WaysIn } from "./WaysIn.js"
import { Webhooks } from "./Webhooks.js"

/** When a reset request is answered: above what its work takes on an idle machine, and never later (EvenAnswers). */
export const RESET_ANSWER_FLOOR = Duration.millis(20)

/**
 * Password reset by mailed token. The token carries a fingerprint of the password hash it may
 * replace: once any reset (or change) succeeds the hash differs and every earlier token is
 * spent, without storing anything and across restarts.
 */
export class PasswordReset extends Effect.Service<PasswordReset>()("app/PasswordReset", {
  effect: Effect.gen(function* () {
    const users = yield* UserRepo
    const signer = yield* TokenSigner
    const hasher = yield* PasswordHasher
    const events = yield* Events
    const webhooks = yield* Webhooks
    const crypto = yield* Cryptography
    const policy = yield* AuthPolicy
    const waysIn = yield* WaysIn
    const even = yield* EvenAnswers

    const fingerprint = (hashedPassword: Option.Option<string>) =>
      crypto.digest(`pwd:${Option.getOrElse(hashedPassword, () => "")}`)

    const mail = Effect.fnUntraced(function* (user: User) {
      const token = yield* signer.sign({
        sub: user.id,
        type: "password_reset",
        jti: yield* crypto.randomId,
        ...tokenWindow(yield* DateTime.now, Duration.minutes(policy.tokens.passwordResetExpireMinutes)),
        pwd: fingerprint(user.hashed_password)
      })
      const reset = AuthEvent.send_password_reset_email({ email: user.email, token })
      // Nothing is stored for the mail: its webhook message commits alone.
      yield* webhooks.publishEvent(reset)
      yield* events.emit(reset)
    })

    /**
     * Mails a reset token when the address belongs to an active user; answers nothing either way,
     * at RESET_ANSWER_FLOOR after the request, known address or not.
     */
    const request = Effect.fn("PasswordReset.request")(function* (email: string) {
      yield* even.atFloor(
        RESET_ANSWER_FLOOR,
        Effect.map(users.findByLogin("email", normaliseLogin("email", email)), (found) =>
          Option.isSome(found) && found.value.is_active ? mail(found.value) : Effect.void
        )
      )
    })

    /**
     * Sets the new password and ends every session of the user. Following the mailed link also
     * proves the address (domain/WaysIn.ts): the user becomes verified, and an account that had
     * never proved it loses every way in it held before (its passkeys, its linked providers), for
     * whoever registered it was not the address's owner.
     */
    const confirm = Effect.fn("PasswordReset.confirm")(function* (
      token: string,
      newPassword: Redacted.Redacted<string>
    ) {
      const claims = yield* signer.verify(token, "password_reset")
      const found = yield* users.findById(UserId.make(claims.sub))
      if (Option.isNone(found) || !found.value.is_active) {
        return yield* new TokenError({ message: "The token does not belong to an active account." })
      }
      if (claims.pwd !== fingerprint(found.value.hashed_password)) {
        return yield* new TokenBlacklistedError({ message: "The token has already been used." })
      }
      yield* checkPassword(policy.passwordPolicy, newPassword)
      const hashed = yield* hasher.hash(newPassword)
      const { done: updated } = yield* waysIn
        .proveAddress(
          found.value,
          "password_reset_link",
          WayInChange.PasswordReset(),
          Effect.zipRight(
            users.setPassword(found.value.id, hashed),
            users.setFlags(found.value.id, { is_verified: true })
          ),
          // Whoever holds the mailed token acts as the user.
          {
            actor: Actor.user(found.value.id),
            event: (updated) =>
              AuthEvent.after_password_reset({ user: toPublicUser(Option.getOrElse(updated, () => found.value)) })
          }
        )
        .pipe(
          // The user was deleted meanwhile: the token belongs to no account any more.
          Effect.catchTag("CredentialsChangedError", () =>
            Effect.fail(new TokenError({ message: "The token does not belong to an active account." }))
          )
        )
      yield* events.emit(
        AuthEvent.after_password_reset({ user: toPublicUser(Option.getOrElse(updated, () => found.value)) })
      )
    })

    return { request, confirm } as const
  })
}) {}
