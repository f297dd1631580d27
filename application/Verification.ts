import { DateTime, Duration, Effect, Option } from "effect"
import { Actor } from "../domain/Audit.js"
import { AuthEvent } from "../domain/Events.js"
import { TokenBlacklistedError, TokenError } from "../domain/errors.js"
import { tokenWindow } from "../domain/Token.js"
import { toPublicUser, type User, UserId } from "../domain/User.js"
import { Audit } from "./Audit.js"
import { AuthPolicy } from "./AuthPolicy.js"
import { Cryptography } from "./ports/Cryptography.js"
import { Events } from "./ports/Events.js"
import { TokenSigner } from "./ports/TokenSigner.js"
import { Transaction } from "./ports/Transaction.js"
import { UserRepo } from "./ports/UserRepo.js"
import { Webhooks } from "./Webhooks.js"

/**
 * Email verification. The token names the user and the address; it works once because
 * confirming makes the user verified, after which every verification token is spent.
 */
export class Verification extends Effect.Service<Verification>()("app/Verification", {
  effect: Effect.gen(function* () {
    const users = yield* UserRepo
    const signer = yield* TokenSigner
    const events = yield* Events
    const webhooks = yield* Webhooks
    const crypto = yield* Cryptography
    const policy = yield* AuthPolicy
    const audit = yield* Audit
    const tx = yield* Transaction

    /** Sends a verification token to the user's address, unless it is verified already. */
    const send = Effect.fn("Verification.send")(function* (user: User) {
      if (user.is_verified) return
      const token = yield* signer.sign({
        sub: user.id,
        type: "verify_email",
        jti: yield* crypto.randomId,
        ...tokenWindow(yield* DateTime.now, Duration.minutes(policy.tokens.emailVerifyExpireMinutes)),
        email: user.email
      })
      const mail = AuthEvent.send_verification_email({ email: user.email, token })
      // Nothing is stored for the mail: its webhook message commits alone.
      yield* webhooks.publishEvent(mail)
      yield* events.emit(mail)
    })

    const confirm = Effect.fn("Verification.confirm")(function* (token: string) {
      const claims = yield* signer.verify(token, "verify_email")
      const found = yield* users.findById(UserId.make(claims.sub))
      if (Option.isNone(found) || !found.value.is_active || found.value.email !== claims.email) {
        return yield* new TokenError({ message: "The token does not belong to an active account." })
      }
      if (found.value.is_verified) {
        return yield* new TokenBlacklistedError({ message: "The token has already been used." })
      }
      const [, verified] = yield* tx.transaction(
        Effect.all([
          audit.append({
            type: "email.verified",
            user_id: found.value.id,
            actor: Actor.user(found.value.id),
            details: { email: found.value.email }
          }),
          users.setFlags(found.value.id, { is_verified: true })
        ]).pipe(
          Effect.tap(([, stored]) =>
            webhooks.publishEvent(
              AuthEvent.after_email_verify({ user: toPublicUser(Option.getOrElse(stored, () => found.value)) })
            )
          )
        )
      )
      const user = Option.getOrElse(verified, () => found.value)
      yield* events.emit(AuthEvent.after_email_verify({ user: toPublicUser(user) }))
    })

    return { send, confirm } as const
  })
}) {}
