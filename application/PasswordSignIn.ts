import { Effect, Option, type Redacted } from "effect"
import { AuthEvent } from "../domain/Events.js"
import { AuthenticationError } from "../domain/errors.js"
import type { ClientInfo } from "../domain/Session.js"
import type { LoginResponse } from "../domain/Token.js"
import { normaliseLogin, toPublicUser, type UserId } from "../domain/User.js"
import { Audit } from "./Audit.js"
import { AuthPolicy } from "./AuthPolicy.js"
import { Lockout } from "./Lockout.js"
import { countedSignIn } from "./metrics.js"
import { Events } from "./ports/Events.js"
import { PasswordHasher } from "./ports/PasswordHasher.js"
import { UserRepo } from "./ports/UserRepo.js"
import { Sessions } from "./Sessions.js"

/** Why a sign-in that passed its checks starts no session after all: the user is gone, or its ways in changed. */
const failedSignIn = () => Effect.fail(new AuthenticationError())

/** Sign-in with the login field and a password, under the lockout rule. */
export class PasswordSignIn extends Effect.Service<PasswordSignIn>()("app/PasswordSignIn", {
  effect: Effect.gen(function* () {
    const users = yield* UserRepo
    const hasher = yield* PasswordHasher
    const sessions = yield* Sessions
    const events = yield* Events
    const lockout = yield* Lockout
    const audit = yield* Audit
    const { accounts } = yield* AuthPolicy

    /** A stronger or current hash is stored on the way through; a failure to store it is not the user's. */
    const upgradeHash = (userId: Parameters<typeof users.setPassword>[0], password: Redacted.Redacted<string>) =>
      hasher.hash(password).pipe(
        Effect.flatMap((hashed) => users.setPassword(userId, hashed)),
        Effect.catchAll((error) => Effect.logWarning("could not store the upgraded password hash", error))
      )

    /**
     * A failed sign-in, recorded with its reason for the audit log's readers, answered the one
     * way to the client. An unknown login is recorded by the identifier as normalised.
     */
    const failed = (login: string, user: Option.Option<{ readonly id: UserId }>, reason: string) =>
      audit
        .record({
          type: "sign_in.failed",
          user_id: Option.getOrNull(Option.map(user, (found) => found.id)),
          details: { method: "password", reason, ...(Option.isNone(user) ? { identifier: login } : {}) }
        })
        .pipe(Effect.zipRight(Effect.fail(new AuthenticationError())))

    /**
     * Every failure costs one password verification and answers the same AuthenticationError:
     * unknown login, user without a password, wrong password, inactive account.
     */
    const verifyCredentials = Effect.fnUntraced(function* (login: string, password: Redacted.Redacted<string>) {
      const found = yield* users.findByLogin(accounts.loginField, login)
      const hashed = Option.flatMap(found, (user) => user.hashed_password)
      if (Option.isNone(found) || Option.isNone(hashed)) {
        yield* hasher.verifyNothing(password)
        return yield* failed(login, found, Option.isNone(found) ? "unknown_account" : "no_password")
      }
      const user = found.value
      const matches = yield* hasher.verify(hashed.value, password)
      if (!matches) return yield* failed(login, found, "wrong_password")
      if (!user.is_active) return yield* failed(login, found, "inactive")
      if (hasher.needsRehash(hashed.value)) yield* upgradeHash(user.id, password)
      return user
    })

    /**
     * Password sign-in. Attempts are counted per normalised identifier, known or not, so an
     * unknown login locks exactly like a known one; while locked, the password is not even
     * verified, for known and unknown identifiers alike. The failure that reaches the maximum
     * still answers 401; a success clears the count.
     */
    const login = Effect.fn("PasswordSignIn.login")(function* (
      identifier: string,
      password: Redacted.Redacted<string>,
      client: ClientInfo
    ) {
      const normalised = normaliseLogin(accounts.loginField, identifier)
      const user = yield* lockout.guard(normalised, verifyCredentials(normalised, password))
      // A user deleted since the check signs nobody in: the same answer as any failed sign-in.
      const signedIn = AuthEvent.after_login({ user: toPublicUser(user) })
      const pair = yield* sessions
        .start(user, client, { method: "password" }, signedIn)
        .pipe(Effect.catchTags({ UserNotFoundError: failedSignIn, CredentialsChangedError: failedSignIn }))
      yield* events.emit(signedIn)
      return { ...pair, user: toPublicUser(user) } satisfies LoginResponse
    }, countedSignIn("password"))

    return { login } as const
  })
}) {}
