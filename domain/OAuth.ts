import { Data, Option, Schema } from "effect"
import { NewEmail } from "./Address.js"
import type { TokenPayload } from "./Token.js"
import { type Email, type User, UserId } from "./User.js"
import { evictsOnProof } from "./WaysIn.js"

/** A user as an OAuth provider describes them, mapped from its user info. */
export const OAuthUserInfo = Schema.Struct({
  provider: Schema.NonEmptyString,
  provider_user_id: Schema.NonEmptyString,
  email: Schema.NullOr(Schema.String),
  email_verified: Schema.optionalWith(Schema.Boolean, { default: () => false }),
  name: Schema.NullOr(Schema.String),
  picture: Schema.NullOr(Schema.String),
  /** The provider's own answer, as it came. */
  raw: Schema.Record({ key: Schema.String, value: Schema.Unknown })
}).annotations({ identifier: "OAuthUserInfo" })
export type OAuthUserInfo = typeof OAuthUserInfo.Type

export const LinkedAccountId = Schema.String.pipe(Schema.nonEmptyString(), Schema.brand("LinkedAccountId"))
export type LinkedAccountId = typeof LinkedAccountId.Type

/**
 * A provider account linked to a user, as stored. The provider's tokens are sealed before they
 * get here: this record only carries them.
 */
export class LinkedAccount extends Schema.Class<LinkedAccount>("LinkedAccount")({
  id: LinkedAccountId,
  provider: Schema.NonEmptyString,
  provider_user_id: Schema.NonEmptyString,
  user_id: UserId,
  /** For display only: it never verifies or changes the user's own email. */
  provider_email: Schema.OptionFromNullOr(Schema.String),
  access_token: Schema.OptionFromNullOr(Schema.String),
  refresh_token: Schema.OptionFromNullOr(Schema.String),
  expires_at: Schema.OptionFromNullOr(Schema.DateTimeUtc),
  created_at: Schema.DateTimeUtc
}) {}

const decodeEmail = Schema.decodeUnknownOption(NewEmail)

/**
 * The provider's email as the service stores and compares emails (domain/User.ts), or none when
 * there is none, it is not an address, or it looks like another (domain/Address.ts): such an
 * email matches nobody and makes nobody, and the sign-in is refused as one without an email.
 */
export const providerEmail = (info: OAuthUserInfo): Option.Option<Email> =>
  info.email === null ? Option.none() : decodeEmail(info.email)

/** Why a sign-in through a provider is refused. Clients get one sentence for all of them. */
export type SignInRefusal =
  /** The provider gave no usable email, and a user cannot be made or found without one. */
  | "email_missing"
  /** The provider does not vouch for the email. */
  | "email_unverified"
  /** The email belongs to a user and OAUTH_AUTO_LINK_BY_EMAIL is off. */
  | "email_taken"
  /** The email's user already linked another account of this provider. */
  | "provider_already_linked"

/** What an OAuth sign-in does once the provider has said who the user is (spec rule 3). */
export type SignInDecision = Data.TaggedEnum<{
  /** The provider account is linked: refresh its tokens and sign its user in. */
  SignInLinked: { readonly account: LinkedAccount; readonly user: User }
  /**
   * Link the provider account to the user holding the email, then sign them in. With `takeover`,
   * that user never proved the address: whoever registered it loses the password and sessions
   * first, and the user becomes verified (the provider vouched for the address).
   */
  AutoLink: { readonly user: User; readonly takeover: boolean }
  /** A new user with the provider's email, verified, without a password. */
  Create: { readonly email: Email }
  Refuse: { readonly reason: SignInRefusal }
}>
export const SignInDecision = Data.taggedEnum<SignInDecision>()

export interface SignInFacts {
  /** The account linked for (provider, provider_user_id), with its user. */
  readonly linked: Option.Option<{ readonly account: LinkedAccount; readonly user: User }>
  /** The user holding the provider's email (see `providerEmail`), and the providers it linked. */
  readonly emailHolder: Option.Option<{ readonly user: User; readonly linkedProviders: ReadonlyArray<string> }>
  readonly info: OAuthUserInfo
  /** OAUTH_AUTO_LINK_BY_EMAIL. */
  readonly autoLinkByEmail: boolean
}

/**
 * The sign-in account rule. A new user is only made for an email the provider vouches for:
 * making a verified account of an address nobody proved would hand its future owner an account
 * that the provider account's holder can still enter.
 */
export const decideSignIn = (facts: SignInFacts): SignInDecision => {
  if (Option.isSome(facts.linked)) return SignInDecision.SignInLinked(facts.linked.value)
  const email = providerEmail(facts.info)
  if (Option.isNone(email)) return SignInDecision.Refuse({ reason: "email_missing" })
  if (!facts.info.email_verified) return SignInDecision.Refuse({ reason: "email_unverified" })
  const holder = Option.filter(facts.emailHolder, ({ user }) => user.email === email.value)
  if (Option.isNone(holder)) return SignInDecision.Create({ email: email.value })
  if (!facts.autoLinkByEmail) return SignInDecision.Refuse({ reason: "email_taken" })
  const { user, linkedProviders } = holder.value
  // The provider account itself is not linked (checked above), so this is another one.
  if (linkedProviders.includes(facts.info.provider)) return SignInDecision.Refuse({ reason: "provider_already_linked" })
  return SignInDecision.AutoLink({ user, takeover: evictsOnProof(user) })
}

/** What a link callback does (spec rules 4 and 5). */
export type LinkDecision = Data.TaggedEnum<{
  /** The caller already has this very account: refresh its tokens, answer 200. */
  Relink: { readonly account: LinkedAccount }
  Link: {}
  /** The provider account belongs to another user; it is never moved (409). */
  AccountLinkedToOther: {}
  /** The caller already linked a different account of this provider (409). */
  ProviderAlreadyLinked: {}
}>
export const LinkDecision = Data.taggedEnum<LinkDecision>()

export interface LinkFacts {
  readonly caller: UserId
  /** The account linked for the provider's (provider, provider_user_id), whoever holds it. */
  readonly identity: Option.Option<LinkedAccount>
  /** The caller's account for this provider. */
  readonly callersAccount: Option.Option<LinkedAccount>
}

export const decideLink = (facts: LinkFacts): LinkDecision => {
  if (Option.isSome(facts.identity)) {
    return facts.identity.value.user_id === facts.caller
      ? LinkDecision.Relink({ account: facts.identity.value })
      : LinkDecision.AccountLinkedToOther()
  }
  return Option.isSome(facts.callersAccount) ? LinkDecision.ProviderAlreadyLinked() : LinkDecision.Link()
}

/** A sign-in state and a link state are different purposes, never accepted for one another. */
export const OAuthStatePurpose = Schema.Literal("oauth_state", "oauth_link_state")
export type OAuthStatePurpose = typeof OAuthStatePurpose.Type

/** What a state token says, once its signature and lifetime were checked. */
export const OAuthStateClaims = Schema.Struct({
  purpose: OAuthStatePurpose,
  /** Hex SHA-256 of the binding the client keeps. */
  binding_digest: Schema.String.pipe(Schema.pattern(/^[0-9a-f]{64}$/)),
  nonce: Schema.NonEmptyString,
  provider: Schema.NonEmptyString,
  /** The callback URL of the authorization request: the code exchange must name it again. */
  redirect_uri: Schema.NonEmptyString,
  /** Link states only: the user who started the link. Never the subject, so it is never a sign-in. */
  link_user_id: Schema.optional(UserId)
})
export type OAuthStateClaims = typeof OAuthStateClaims.Type

const decodeStateClaims = Schema.decodeUnknownOption(OAuthStateClaims)

/** The state claims of a verified token; none when the token is no complete OAuth state. */
export const stateClaimsOf = (payload: TokenPayload): Option.Option<OAuthStateClaims> =>
  decodeStateClaims({
    purpose: payload.type,
    binding_digest: payload.binding_digest,
    nonce: payload.nonce,
    provider: payload.provider,
    redirect_uri: payload.redirect_uri,
    ...(payload.link_user_id === undefined ? {} : { link_user_id: payload.link_user_id })
  })

/** What a callback expects of the state it receives. */
export type StateExpectation =
  | {
      readonly purpose: "oauth_state"
      readonly provider: string
      /** Hex SHA-256 of the binding the callback received. */
      readonly bindingDigest: string
    }
  | {
      readonly purpose: "oauth_link_state"
      readonly provider: string
      readonly bindingDigest: string
      /** The authenticated caller of the link callback. */
      readonly caller: UserId
    }

export type StateProblem = "purpose" | "provider" | "binding" | "link_user"

export type StateCheck = Data.TaggedEnum<{
  Valid: {}
  Invalid: { readonly problem: StateProblem }
}>
export const StateCheck = Data.taggedEnum<StateCheck>()

/**
 * Compares two strings in time that depends only on the length of `known`, so that a mismatch
 * tells nothing about where it is.
 */
export const constantTimeEqual = (known: string, candidate: string): boolean => {
  const sameLength = known.length === candidate.length
  // A candidate of another length fails, after `known` was compared with itself in the same time.
  const other = sameLength ? candidate : known
  let difference = sameLength ? 0 : 1
  for (let i = 0; i < known.length; i++) difference |= known.charCodeAt(i) ^ other.charCodeAt(i)
  return difference === 0
}

export const checkState = (claims: OAuthStateClaims, expected: StateExpectation): StateCheck => {
  if (claims.purpose !== expected.purpose) return StateCheck.Invalid({ problem: "purpose" })
  if (claims.provider !== expected.provider) return StateCheck.Invalid({ problem: "provider" })
  if (!constantTimeEqual(claims.binding_digest, expected.bindingDigest))
    return StateCheck.Invalid({ problem: "binding" })
  const linkUser = expected.purpose === "oauth_link_state" ? expected.caller : undefined
  if (claims.link_user_id !== linkUser) return StateCheck.Invalid({ problem: "link_user" })
  return StateCheck.Valid()
}
