import { DateTime, Effect, Layer, Option } from "effect"
import { v7 as uuidv7 } from "uuid"
import { OAuthAccountRepo } from "../../application/ports/OAuthAccountRepo.js"
import { StoreUnavailableError } from "../../application/ports/StoreUnavailableError.js"
import { UserRepo } from "../../application/ports/UserRepo.js"
import { OAuthAccountAlreadyLinkedError, OAuthProviderAlreadyLinkedError } from "../../domain/errors.js"
import { LinkedAccount, LinkedAccountId } from "../../domain/OAuth.js"
import type { UserId } from "../../domain/User.js"

/**
 * Linked accounts in a Map. The user store is asked whether an account's user still exists, so
 * that a deleted user's accounts go with it as the database's foreign key makes them go. The
 * check-and-insert of a link runs without yielding, so of racing links exactly one wins.
 */
export const make = Effect.gen(function* () {
  const users = yield* UserRepo
  const accounts = new Map<LinkedAccountId, LinkedAccount>()

  const ofUser = (userId: UserId) => [...accounts.values()].filter((account) => account.user_id === userId)
  const find = (predicate: (account: LinkedAccount) => boolean) =>
    Option.fromNullable([...accounts.values()].find(predicate))

  /** Drops every account of the user when the user is gone; true when the user exists. */
  const userExists = (userId: UserId) =>
    Effect.map(users.findById(userId), (user) => {
      if (Option.isSome(user)) return true
      for (const account of ofUser(userId)) accounts.delete(account.id)
      return false
    })

  /** The account, unless its user is gone. */
  const live = (
    account: Option.Option<LinkedAccount>
  ): Effect.Effect<Option.Option<LinkedAccount>, StoreUnavailableError> =>
    Option.isNone(account)
      ? Effect.succeed(account)
      : Effect.map(userExists(account.value.user_id), (exists) => (exists ? account : Option.none()))

  const isAccount = (provider: string, providerUserId: string) => (account: LinkedAccount) =>
    account.provider === provider && account.provider_user_id === providerUserId

  return OAuthAccountRepo.of({
    link: (fields) =>
      Effect.gen(function* () {
        const now = yield* DateTime.now
        yield* live(find(isAccount(fields.provider, fields.provider_user_id)))
        // As the database's foreign key refuses it.
        if (!(yield* userExists(fields.user_id))) return yield* new StoreUnavailableError({ store: "memory" })
        return yield* Effect.suspend(
          (): Effect.Effect<LinkedAccount, OAuthAccountAlreadyLinkedError | OAuthProviderAlreadyLinkedError> => {
            if (Option.isSome(find(isAccount(fields.provider, fields.provider_user_id)))) {
              return Effect.fail(new OAuthAccountAlreadyLinkedError())
            }
            if (ofUser(fields.user_id).some((account) => account.provider === fields.provider)) {
              return Effect.fail(new OAuthProviderAlreadyLinkedError())
            }
            const account = new LinkedAccount({ ...fields, id: LinkedAccountId.make(uuidv7()), created_at: now })
            accounts.set(account.id, account)
            return Effect.succeed(account)
          }
        )
      }),
    findByProviderAccount: (provider, providerUserId) =>
      Effect.suspend(() => live(find(isAccount(provider, providerUserId)))),
    // Code-unit order of names, as the SQL stores answer; a user has one account per provider.
    listOf: (userId) =>
      Effect.map(userExists(userId), (exists) =>
        exists ? ofUser(userId).sort((a, b) => (a.provider < b.provider ? -1 : 1)) : []
      ),
    findOf: (userId, provider) =>
      Effect.suspend(() => live(find((account) => account.user_id === userId && account.provider === provider))),
    updateTokens: (id, tokens) =>
      Effect.zipRight(
        Effect.suspend(() => live(Option.fromNullable(accounts.get(id)))),
        // Read again after the user check, so that an account unlinked meanwhile stays unlinked.
        Effect.sync(() =>
          Option.map(Option.fromNullable(accounts.get(id)), (stored) => {
            const updated = new LinkedAccount({
              ...stored,
              ...tokens,
              refresh_token: Option.orElse(tokens.refresh_token, () => stored.refresh_token)
            })
            accounts.set(id, updated)
            return updated
          })
        )
      ),
    unlink: (userId, provider) =>
      Effect.sync(() => {
        const account = find((stored) => stored.user_id === userId && stored.provider === provider)
        return Option.isSome(account) && accounts.delete(account.value.id)
      }),
    countOf: (userId) => Effect.map(userExists(userId), (exists) => (exists ? ofUser(userId).length : 0))
  })
})

/** Needs the user store it follows: provide the same UserRepo layer as the service's. */
export const layer = Layer.effect(OAuthAccountRepo, make)
