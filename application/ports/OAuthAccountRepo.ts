import { Context, type DateTime, type Effect, type Option } from "effect"
import type { OAuthAccountAlreadyLinkedError, OAuthProviderAlreadyLinkedError } from "../../domain/errors.js"
import type { LinkedAccount, LinkedAccountId } from "../../domain/OAuth.js"
import type { UserId } from "../../domain/User.js"
import type { StoreUnavailableError } from "./StoreUnavailableError.js"

/** The provider's tokens and email as last seen; tokens arrive sealed. */
export interface AccountTokens {
  readonly provider_email: Option.Option<string>
  readonly access_token: Option.Option<string>
  readonly refresh_token: Option.Option<string>
  readonly expires_at: Option.Option<DateTime.Utc>
}

export interface NewLinkedAccount extends AccountTokens {
  readonly provider: string
  readonly provider_user_id: string
  readonly user_id: UserId
}

/**
 * Provider accounts linked to users: one user per provider account, one account per provider
 * per user. Accounts go with their user when it is deleted.
 */
export class OAuthAccountRepo extends Context.Tag("app/OAuthAccountRepo")<
  OAuthAccountRepo,
  {
    /**
     * Stores a new link, made now. Fails with OAuthAccountAlreadyLinkedError when the provider
     * account is linked to anyone (the same user included), else with
     * OAuthProviderAlreadyLinkedError when the user has an account of this provider; the store's
     * unique constraints decide, so of racing links exactly one is stored. A user that is gone
     * cannot be linked: the store refuses it as it refuses any write it cannot make.
     */
    readonly link: (
      account: NewLinkedAccount
    ) => Effect.Effect<
      LinkedAccount,
      OAuthAccountAlreadyLinkedError | OAuthProviderAlreadyLinkedError | StoreUnavailableError
    >
    readonly findByProviderAccount: (
      provider: string,
      providerUserId: string
    ) => Effect.Effect<Option.Option<LinkedAccount>, StoreUnavailableError>
    /** The user's accounts, ordered by provider. */
    readonly listOf: (userId: UserId) => Effect.Effect<ReadonlyArray<LinkedAccount>, StoreUnavailableError>
    readonly findOf: (
      userId: UserId,
      provider: string
    ) => Effect.Effect<Option.Option<LinkedAccount>, StoreUnavailableError>
    /**
     * Records the tokens and email of a new sign-in or link; the updated account, or none when it
     * is gone. A refresh token that is none keeps the stored one: providers such as Google issue
     * one only at the first consent.
     */
    readonly updateTokens: (
      id: LinkedAccountId,
      tokens: AccountTokens
    ) => Effect.Effect<Option.Option<LinkedAccount>, StoreUnavailableError>
    /** Removes the user's account of the provider; true when there was one. */
    readonly unlink: (userId: UserId, provider: string) => Effect.Effect<boolean, StoreUnavailableError>
    readonly countOf: (userId: UserId) => Effect.Effect<number, StoreUnavailableError>
  }
>() {}
