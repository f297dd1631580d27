import { Effect, Option, type Redacted } from "effect"
import { AuthEvent } from "../domain/Events.js"
import { AuthenticationError } from "../domain/errors.js"
import type { LoginResponse } from "../domain/Token.js"
import { normaliseLogin, toPublicUser } from "../domain/User.js"
import { AuthPolicy } from "./AuthPolicy.js"
import { Events } from "./ports/Events.js"
import { PasswordHasher } from "./ports/PasswordHasher.js"
import { UserRepo } from "./ports/UserRepo.js"
import { type ClientInfo, type Principal, Tokens } from "./Tokens.js"

/** Password sign-in, token refresh and sign-out. */
export class Sessions extends Effect.Service<Sessions>()("app/Sessions", {
  effect: Effect.gen(function* () {
    const users = yield* UserRepo
    const hasher = yield* PasswordHasher
    const tokens = yield* Tokens
    const events = yield* Events
    const policy = yield* AuthPolicy

    /** A stronger or current hash is stored on the way through; a failure to store it is not the user's. */
    const upgradeHash = (userId: Parameters<typeof users.setPassword>[0], password: Redacted.Redacted<string>) =>
      hasher.hash(password).pipe(
        Effect.flatMap((hashed) => users.setPassword(userId, hashed)),
        Effect.catchAll((error) => Effect.logWarning("could not store the upgraded password hash", error))
      )

    /**
     * Every failure costs one password verification and answers the same AuthenticationError:
     * unknown login, user without a password, wrong password, inactive account.
     */
    const login = Effect.fn("Sessions.login")(function* (
      identifier: string,
      password: Redacted.Redacted<string>,
      client: ClientInfo
    ) {
      const found = yield* users.findByLogin(policy.loginField, normaliseLogin(policy.loginField, identifier))
      const hashed = Option.flatMap(found, (user) => user.hashed_password)
      if (Option.isNone(found) || Option.isNone(hashed)) {
        yield* hasher.verifyNothing(password)
        return yield* new AuthenticationError()
      }
      const user = found.value
      const matches = yield* hasher.verify(hashed.value, password)
      if (!matches || !user.is_active) return yield* new AuthenticationError()
      if (hasher.needsRehash(hashed.value)) yield* upgradeHash(user.id, password)
      const pair = yield* tokens.startSession(user, client)
      yield* events.emit(AuthEvent.after_login({ user: toPublicUser(user) }))
      return { ...pair, user: toPublicUser(user) } satisfies LoginResponse
    })

    return {
      login,
      refresh: tokens.refresh,
      logout: (principal: Principal) =>
        tokens
          .endSessionOf(principal)
          .pipe(Effect.zipRight(events.emit(AuthEvent.after_logout({ user: toPublicUser(principal.user) }))))
    } as const
  })
}) {}
