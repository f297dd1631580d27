import { Context, type Effect, type Option } from "effect"
import type { PasswordPolicy } from "../domain/Password.js"
import type { ProfileRules } from "../domain/Profile.js"
import type { PublicUser } from "../domain/User.js"

/**
 * What the use cases need of the settings, declared here in their own terms so that the
 * composition root hands over the settings' sections as they are (config/sections), with no
 * copy mapped by hand: a new setting a use case reads is a field here and in its section.
 */

/** Token lifetimes and revocation (the tokens section). */
export interface TokenRules {
  readonly accessTokenExpireMinutes: number
  readonly refreshTokenExpireDays: number
  /** Zero is the strict rule: any second presentation of a rotated refresh token is reuse. */
  readonly refreshReuseGraceSeconds: number
  /** The live sessions a user may hold; a sign-in past it ends the least recently used. */
  readonly maxSessionsPerUser: number
  readonly emailVerifyExpireMinutes: number
  readonly passwordResetExpireMinutes: number
  /** How long a mailed sign-in link and code can be confirmed. */
  readonly emailSignInExpireMinutes: number
  /** How long an address change's links can be used. */
  readonly emailChangeExpireMinutes: number
  /** How long the old address can undo an address change made (and stays reserved). */
  readonly emailChangeUndoDays: number
  /** Clock skew tolerated when checking token expiry; revocations outlive tokens by this much. */
  readonly jwtLeewaySeconds: number
  /** When false, access tokens live until they expire: logout ends only the refresh side. */
  readonly blacklistEnabled: boolean
}

/** How accounts are made and signed in to (the accounts section). */
export interface AccountRules {
  readonly loginField: string
  readonly preventRegistrationEnumeration: boolean
  /** Registration sends the verification mail. */
  readonly sendVerificationOnRegister: boolean
  /** How recent (seconds) the session's sign-in must be to add a way in (Ways in). */
  readonly reauthMaxAgeSeconds: number
  /** The owner is mailed when a way in is added or removed, or the password set, changed or reset. */
  readonly securityNotices: boolean
  /** A confirmed sign-in mail for an unknown address creates the account. */
  readonly emailSignUpEnabled: boolean
}

/** A rate limit: at most `count` requests in `windowSeconds`. */
export interface RateLimitRules {
  readonly count: number
  readonly windowSeconds: number
}

/**
 * Failed password checks per identifier before it is locked, and for how long; the limits the
 * use cases apply themselves, keyed by user rather than by client address (the limits section).
 */
export interface LimitRules {
  readonly lockoutEnabled: boolean
  readonly maxLoginAttempts: number
  readonly lockoutDurationMinutes: number
  readonly authRateLimitEnabled: boolean
  readonly authRateLimits: { readonly change_password: RateLimitRules }
}

/** Social sign-in's account and state rules (the oauth section). */
export interface OAuthRules {
  /** Link a provider account to the user holding the address the provider vouches for. */
  readonly oauthAutoLinkByEmail: boolean
  readonly oauthStateExpireSeconds: number
}

/** Passkey ceremonies (the passkeys section). */
export interface PasskeyRules {
  /** Seconds a challenge can be completed in. */
  readonly passkeyChallengeTtl: number
}

/** What is kept and for how long (the storage section); docs/operating.md, "Data over time". */
export interface StorageRules {
  readonly auditRetentionDays: number
  /** Seconds between two sweeps of a serving process. */
  readonly pruneIntervalSeconds: number
  /** OIDC_DYNAMIC_CLIENT_IDLE_DAYS: a self-registered client unused this long is removed. */
  readonly dynamicClientIdleDays: number
}

/** The rules the use cases follow, as the deployment configured them. */
export class AuthPolicy extends Context.Tag("app/AuthPolicy")<
  AuthPolicy,
  {
    readonly tokens: TokenRules
    readonly accounts: AccountRules
    readonly limits: LimitRules
    readonly oauth: OAuthRules
    readonly passkeys: PasskeyRules
    readonly storage: StorageRules
    /** The settings' password lengths merged with the deployment's validator options. */
    readonly passwordPolicy: PasswordPolicy
    /** The deployment's custom user fields. */
    readonly profile: ProfileRules
    /**
     * The deployment's custom claims for an access token of this user (its `extra`), or none.
     * A claims function that fails is a defect: no token is issued without the claims it owes.
     */
    readonly customClaims: Option.Option<(user: PublicUser) => Effect.Effect<Readonly<Record<string, unknown>>>>
  }
>() {}
