import { Data, Effect, Either, Option, type Redacted } from "effect"
import { Actor } from "../domain/Audit.js"
import { AuthEvent } from "../domain/Events.js"
import { UserNotFoundError, ValidationError } from "../domain/errors.js"
import { checkPassword } from "../domain/Password.js"
import { encodeFieldValues, profilePatchProblems, registrationFieldValues } from "../domain/Profile.js"
import { type Email, type PublicUser, toPublicUser, type UserId } from "../domain/User.js"
import { passwordChangeProof, WayInChange } from "../domain/WaysIn.js"
import { Audit } from "./Audit.js"
import { AuthPolicy } from "./AuthPolicy.js"
import { CurrentPassword } from "./CurrentPassword.js"
import { Events } from "./ports/Events.js"
import { PasswordHasher } from "./ports/PasswordHasher.js"
import { Transaction } from "./ports/Transaction.js"
import { type UserFlags, UserRepo } from "./ports/UserRepo.js"
import { currentFamily, type Principal, Sessions } from "./Sessions.js"
import { Verification } from "./Verification.js"
import { WaysIn } from "./WaysIn.js"
import { Webhooks } from "./Webhooks.js"

/** How a registration ended, as far as the caller may know. */
export type Registration = Data.TaggedEnum<{
  /** Enumeration prevention: the same answer whether or not the account was created. */
  Accepted: {}
  Created: { readonly user: PublicUser }
}>
export const Registration = Data.taggedEnum<Registration>()

/** Registration and the signed-in user's own account. */
export class Accounts extends Effect.Service<Accounts>()("app/Accounts", {
  effect: Effect.gen(function* () {
    const users = yield* UserRepo
    const hasher = yield* PasswordHasher
    const sessions = yield* Sessions
    const verification = yield* Verification
    const events = yield* Events
    const webhooks = yield* Webhooks
    const currentPassword = yield* CurrentPassword
    const policy = yield* AuthPolicy
    const audit = yield* Audit
    const tx = yield* Transaction
    const waysIn = yield* WaysIn

    const acceptablePassword = (password: Redacted.Redacted<string>) => checkPassword(policy.passwordPolicy, password)

    /**
     * The password is hashed before the insert whether or not the email is free, so a duplicate
     * costs what a new account costs, and no transaction is held open while hashing.
     */
    const register = Effect.fn("Accounts.register")(function* (
      email: Email,
      password: Redacted.Redacted<string>,
      /** The deployment's registration fields, in their decoded (Type) form. */
      extra: Readonly<Record<string, unknown>> = {}
    ) {
      const encoded = registrationFieldValues(policy.profile, extra)
      if (Either.isLeft(encoded)) {
        return yield* new ValidationError({
          message: "The registration fields are not acceptable.",
          errors: encoded.left
        })
      }
      yield* acceptablePassword(password)
      const hashed = yield* hasher.hash(password)
      const created = yield* webhooks
        .committedWith(
          "after_register",
          users.create({
            email,
            hashed_password: Option.some(hashed),
            is_active: true,
            is_verified: false,
            is_superuser: false,
            fields: encoded.right
          }),
          (user) => AuthEvent.after_register({ user: toPublicUser(user) })
        )
        .pipe(
          Effect.catchTag("UserAlreadyExistsError", (error) =>
            policy.accounts.preventRegistrationEnumeration ? Effect.succeed(undefined) : Effect.fail(error)
          )
        )
      if (created !== undefined) {
        yield* events.emit(AuthEvent.after_register({ user: toPublicUser(created) }))
        if (policy.accounts.sendVerificationOnRegister) yield* verification.send(created)
      }
      if (policy.accounts.preventRegistrationEnumeration || created === undefined) return Registration.Accepted()
      return Registration.Created({ user: toPublicUser(created) })
    })

    /**
     * Applies a profile patch. Only the deployment's custom fields are editable; a patch naming
     * anything else is refused whole, naming every offending field.
     */
    const updateProfile = Effect.fn("Accounts.updateProfile")(function* (
      principal: Principal,
      patch: Readonly<Record<string, unknown>>
    ) {
      const problems = profilePatchProblems(Object.keys(patch), policy.profile)
      if (problems.length > 0) {
        return yield* new ValidationError({ message: "These fields cannot be changed.", errors: problems })
      }
      const encoded = encodeFieldValues(policy.profile.schemas ?? new Map(), patch)
      if (Either.isLeft(encoded)) {
        return yield* new ValidationError({ message: "These values are not acceptable.", errors: encoded.left })
      }
      if (Object.keys(encoded.right).length === 0) return toPublicUser(principal.user)
      const updated = yield* users.setFields(principal.user.id, encoded.right)
      return toPublicUser(Option.getOrElse(updated, () => principal.user))
    })

    /**
     * Deletes the caller's account and ends every one of its sessions, access tokens included.
     * The sessions end first, then their records go, each in batches, so that the user's own
     * deletion has next to nothing left to cascade to however many sessions they held.
     */
    const deleteAccount = Effect.fn("Accounts.deleteAccount")(function* (principal: Principal) {
      const ended = yield* sessions.endAll(principal.user.id, Option.none())
      yield* sessions.forget(principal.user.id)
      yield* users.delete(principal.user.id)
      yield* audit.record({
        type: "account.deleted",
        user_id: principal.user.id,
        actor: Actor.user(principal.user.id),
        details: { sessions_ended: ended.ended }
      })
    })

    /**
     * Sets a new password (domain/WaysIn.ts, passwordChangeProof): the current one is required
     * when there is one, under the change_password limit and the lockout rule; an account without
     * one (OAuth or passkey only) gets its first on the strength of a recent sign-in. The new
     * password and the end of every other session commit together; the caller's session goes on.
     */
    const changePassword = Effect.fn("Accounts.changePassword")(function* (
      principal: Principal,
      given: Option.Option<Redacted.Redacted<string>>,
      newPassword: Redacted.Redacted<string>
    ) {
      yield* currentPassword.limit(principal)
      yield* acceptablePassword(newPassword)
      const stored = principal.user.hashed_password
      const proof = passwordChangeProof(Option.isSome(stored))
      if (Option.isSome(stored)) yield* currentPassword.check(principal, stored.value, given)
      else if (proof._tag === "RecentSignIn") yield* waysIn.requireRecentSignIn(principal)
      const hashed = yield* hasher.hash(newPassword)
      const changed = AuthEvent.after_password_change({ user: toPublicUser(principal.user) })
      yield* waysIn.change(
        principal.user,
        proof._tag === "CurrentPassword" ? WayInChange.PasswordChanged() : WayInChange.PasswordSet(),
        users.setPassword(principal.user.id, hashed),
        {
          actor: Actor.user(principal.user.id),
          expectedVersion: principal.user.credential_version,
          caller: currentFamily(principal),
          event: changed
        }
      )
      yield* events.emit(changed)
    })

    /** An operator's superuser: active, verified, with a password. */
    const createSuperuser = Effect.fn("Accounts.createSuperuser")(function* (
      email: Email,
      password: Redacted.Redacted<string>
    ) {
      yield* acceptablePassword(password)
      const hashed = yield* hasher.hash(password)
      return yield* tx.transaction(
        Effect.tap(
          users.create({
            email,
            hashed_password: Option.some(hashed),
            is_active: true,
            is_verified: true,
            is_superuser: true
          }),
          (user) => audit.append({ type: "user.created", user_id: user.id, details: { is_superuser: true } })
        )
      )
    })

    /**
     * An operator's change of flags. Deactivating a user is a change of its ways in (none works
     * any more): every session ends with it, and no sign-in checked before it starts one after.
     */
    const setFlags = Effect.fn("Accounts.setFlags")(function* (email: Email, flags: UserFlags) {
      const found = yield* users.findByLogin("email", email)
      if (Option.isNone(found)) return yield* new UserNotFoundError()
      const write = users.setFlags(found.value.id, flags)
      const updated =
        flags.is_active === false
          ? yield* waysIn
              .change(found.value, WayInChange.Deactivated(), write, { details: { ...flags } })
              .pipe(Effect.catchTag("CredentialsChangedError", () => Effect.succeedNone))
          : yield* tx.transaction(
              Effect.zipRight(
                audit.append({ type: "user.updated", user_id: found.value.id, details: { ...flags } }),
                // Deleted since it was found: its entry is undone with the transaction.
                Effect.filterOrFail(write, Option.isSome, () => new UserNotFoundError())
              )
            )
      if (Option.isNone(updated)) return yield* new UserNotFoundError()
      return toPublicUser(updated.value)
    })

    /**
     * An operator's new password for a user, under the password policy. Like a reset, every
     * session of the user ends, before the password changes for the same reason, and it is
     * recorded as one, by the request's actor (the CLI).
     */
    const setPassword = Effect.fn("Accounts.setPassword")(function* (id: UserId, password: Redacted.Redacted<string>) {
      yield* acceptablePassword(password)
      const hashed = yield* hasher.hash(password)
      const found = yield* users.findById(id)
      if (Option.isNone(found)) return yield* new UserNotFoundError()
      yield* waysIn
        .change(found.value, WayInChange.PasswordReset(), users.setPassword(id, hashed))
        .pipe(Effect.catchTag("CredentialsChangedError", () => Effect.fail(new UserNotFoundError())))
    })

    return { register, updateProfile, deleteAccount, changePassword, createSuperuser, setFlags, setPassword } as const
  })
}) {}
