import { DateTime, Effect, Option } from "effect"
import { undoEviction, undoIsLive } from "../domain/AddressChange.js"
import { Actor } from "../domain/Audit.js"
import {
  TokenBlacklistedError,
  TokenError,
  TokenExpiredError,
  UserNotFoundError,
  ValidationError
} from "../domain/errors.js"
import { PasskeyId } from "../domain/Passkey.js"
import { type Email, normaliseLogin, type User } from "../domain/User.js"
import { WayInChange } from "../domain/WaysIn.js"
import { AddressChanges } from "./ports/AddressChanges.js"
import { Cryptography } from "./ports/Cryptography.js"
import { OAuthAccountRepo } from "./ports/OAuthAccountRepo.js"
import { PasskeyRepo } from "./ports/PasskeyRepo.js"
import { UserRepo } from "./ports/UserRepo.js"
import { WaysIn } from "./WaysIn.js"

const unknownLink = new TokenError({ message: "The link is not valid: it may have been cut short, or already used." })
const expiredLink = new TokenExpiredError({
  message: "The link has expired: ask an operator of the service to move the account back."
})
const usedLink = new TokenBlacklistedError({ message: "The link has been used." })

/** What an undo answers: the address the account is back at, where a password reset is to be asked. */
export interface Restored {
  readonly email: string
}

/**
 * Taking an address change back (docs/behaviour.md, "Address change"): the old
 * address's undo link restores it, verified, and ends everything whoever moved the account may
 * hold: every session, the password, the passkeys and provider links added since the change; the
 * owner then sets a password by a reset to the restored address. An operator moves an account
 * whose owner no longer reads its old address.
 */
export class AddressChangeUndo extends Effect.Service<AddressChangeUndo>()("app/AddressChangeUndo", {
  effect: Effect.gen(function* () {
    const users = yield* UserRepo
    const changes = yield* AddressChanges
    const passkeys = yield* PasskeyRepo
    const providers = yield* OAuthAccountRepo
    const crypto = yield* Cryptography
    const waysIn = yield* WaysIn

    /**
     * Uses the undo link of a change. The ways in are read first and removed in the change's
     * transaction, which expects the credential version read with them: a way in added meanwhile
     * makes the undo fail (CredentialsChangedError), never leaves it behind.
     */
    const undo = Effect.fn("AddressChangeUndo.undo")(function* (token: string) {
      const digest = crypto.digest(token)
      const found = yield* changes.findUndo(digest)
      if (Option.isNone(found)) return yield* unknownLink
      const record = found.value
      if (!undoIsLive(record, yield* DateTime.now)) return yield* expiredLink
      const account = yield* users.findById(record.user_id)
      if (Option.isNone(account)) return yield* unknownLink
      const user = account.value
      const removed = undoEviction(
        {
          hasPassword: Option.isSome(user.hashed_password),
          passkeys: (yield* passkeys.listOf(user.id)).map((passkey) => ({
            id: passkey.id,
            created_at: passkey.created_at
          })),
          providers: (yield* providers.listOf(user.id)).map((linked) => ({
            id: linked.provider,
            created_at: linked.created_at
          }))
        },
        record.changed_at
      )
      yield* waysIn.change(
        user,
        WayInChange.EmailChangeUndone({ restored: record.old_email, removed }),
        Effect.gen(function* () {
          if (!(yield* changes.takeUndos(user.id, digest))) return yield* usedLink
          yield* changes.remove(user.id)
          yield* users.setEmail(user.id, record.old_email as Email)
          if (removed.password) yield* users.clearPassword(user.id)
          for (const id of removed.passkeys) yield* passkeys.deleteOfUser(user.id, PasskeyId.make(id))
          for (const provider of removed.providers) yield* providers.unlink(user.id, provider)
        }),
        {
          actor: Actor.user(user.id),
          details: {
            restored: record.old_email,
            from: user.email,
            password_cleared: removed.password,
            passkeys_removed: removed.passkeys.length,
            providers_unlinked: removed.providers.join(", ")
          },
          expectedVersion: user.credential_version,
          noticeTo: record.old_email
        }
      )
      return { email: record.old_email } satisfies Restored
    })

    /**
     * An operator moves an account whose owner lost the old mailbox (`portcullis user update
     * --email OLD --new-email NEW`): at once, verified on the operator's word, every session ended
     * and any pending change void; the old address is told.
     */
    const moveByOperator = Effect.fn("AddressChangeUndo.moveByOperator")(function* (email: Email, newEmail: Email) {
      const found = yield* users.findByLogin("email", normaliseLogin("email", email))
      if (Option.isNone(found)) return yield* new UserNotFoundError()
      const user: User = found.value
      const to = normaliseLogin("email", newEmail) as Email
      if (to === user.email) {
        return yield* new ValidationError({
          message: "That is the account's address already.",
          errors: [{ path: "new_email", message: "is the current address" }]
        })
      }
      const moved = yield* waysIn.change(
        user,
        WayInChange.EmailChanged({ from: user.email, to, undoable: false }),
        Effect.zipRight(changes.remove(user.id), users.setEmail(user.id, to)),
        { details: { from: user.email, to, by: "operator" } }
      )
      return Option.getOrElse(moved, () => user)
    })

    return { undo, moveByOperator } as const
  })
}) {}
