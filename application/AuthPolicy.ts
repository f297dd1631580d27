import { Context, type Duration, type Effect, type Option } from "effect"
import type { PasswordPolicy } from "../domain/Password.js"
import type { ProfileRules } from "../domain/Profile.js"
import type { PublicUser } from "../domain/User.js"
import type { LockoutRule } from "./ports/AttemptCounter.js"

/**
 * The rules the use cases follow, as the deployment configured them. Built from Settings by the
 * composition root, so use cases never read the environment.
 */
export class AuthPolicy extends Context.Tag("app/AuthPolicy")<
  AuthPolicy,
  {
    readonly accessTokenTtl: Duration.Duration
    readonly refreshTokenTtl: Duration.Duration
    readonly emailVerifyTtl: Duration.Duration
    readonly passwordResetTtl: Duration.Duration
    /** Registration sends the verification mail. */
    readonly sendVerificationOnRegister: boolean
    /** Zero is the strict rule: any second presentation of a rotated refresh token is reuse. */
    readonly refreshReuseGrace: Duration.Duration
    /** Clock skew tolerated when checking token expiry; revocations outlive tokens by this much. */
    readonly tokenLeeway: Duration.Duration
    /** When false, access tokens live until they expire: logout ends only the refresh side. */
    readonly blacklistEnabled: boolean
    readonly loginField: string
    /** Failed sign-ins per identifier before it is locked, and for how long; none when lockout is off. */
    readonly lockout: Option.Option<LockoutRule>
    readonly preventRegistrationEnumeration: boolean
    readonly passwordPolicy: PasswordPolicy
    readonly profile: ProfileRules
    /**
     * The deployment's custom claims for an access token of this user (its `extra`), or none.
     * A claims function that fails is a defect: no token is issued without the claims it owes.
     */
    readonly customClaims: Option.Option<(user: PublicUser) => Effect.Effect<Readonly<Record<string, unknown>>>>
  }
>() {}
