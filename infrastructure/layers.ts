import { randomBytes } from "node:crypto"
import { Duration, Effect, Layer, Option, Redacted } from "effect"
import { Accounts } from "../application/Accounts.js"
import { AuthPolicy } from "../application/AuthPolicy.js"
import { Sessions } from "../application/Sessions.js"
import { Tokens } from "../application/Tokens.js"
import { type DatabaseUrl, PREFIX, type Settings } from "../config/Settings.js"
import { makePasswordPolicy } from "../domain/Password.js"
import { protectedUserFields } from "../domain/Profile.js"
import * as JoseTokenSigner from "./crypto/JoseTokenSigner.js"
import * as NodeCryptography from "./crypto/NodeCryptography.js"
import * as PasswordHasherArgon2 from "./crypto/PasswordHasherArgon2.js"
import * as AttemptCounterMemory from "./memory/AttemptCounterMemory.js"
import * as BlacklistMemory from "./memory/BlacklistMemory.js"
import * as RateLimiterMemory from "./memory/RateLimiterMemory.js"
import * as RefreshTokenRepoMemory from "./memory/RefreshTokenRepoMemory.js"
import * as UserRepoMemory from "./memory/UserRepoMemory.js"
import * as RefreshTokenRepoSql from "./sql/RefreshTokenRepoSql.js"
import * as SqliteDatabase from "./sql/SqliteDatabase.js"
import * as UserRepoSql from "./sql/UserRepoSql.js"

/**
 * Settings this build accepts as valid but cannot honour yet. Refusing them at start-up is
 * safer than ignoring them: a deployment asking for cookie transport must not get bearer tokens.
 */
export const notYetSupported = (settings: Settings): ReadonlyArray<string> => {
  const problems: Array<string> = []
  const refuse = (name: string, what: string) =>
    problems.push(`${PREFIX}${name}: ${what} is not supported by this version yet`)
  if (settings.databaseUrl.kind === "postgres") refuse("DATABASE_URL", "PostgreSQL")
  if (Option.isSome(settings.redisUrl)) refuse("REDIS_URL", "Redis")
  if (settings.workers > 1) refuse("WORKERS", "more than one worker")
  if (settings.userIdType !== "uuid") refuse("USER_ID_TYPE", `${settings.userIdType} user ids`)
  if (settings.loginField !== "email") refuse("LOGIN_FIELD", "a login field other than email")
  if (!settings.jwtAlgorithm.startsWith("HS")) refuse("JWT_ALGORITHM", settings.jwtAlgorithm)
  if (settings.tokenTransport === "cookie") refuse("TOKEN_TRANSPORT", "cookie transport")
  if (settings.passkeyEnabled) refuse("PASSKEY_ENABLED", "passkey sign-in")
  if (settings.oauthProviders.length > 0) refuse("OAUTH_*", "OAuth sign-in")
  if (Option.isSome(settings.smtpUrl) || Option.isSome(settings.mailer)) refuse("SMTP_URL/MAILER", "sending mail")
  return problems
}

/** SECRET_KEY, or a random key for this run when none is set. */
export const resolveSecretKey = (settings: Pick<Settings, "secretKey">): Redacted.Redacted<string> =>
  Option.getOrElse(settings.secretKey, () => Redacted.make(randomBytes(48).toString("base64url")))

export const authPolicy = (settings: Settings): AuthPolicy["Type"] => ({
  accessTokenTtl: Duration.minutes(settings.accessTokenExpireMinutes),
  refreshTokenTtl: Duration.days(settings.refreshTokenExpireDays),
  refreshReuseGrace: Duration.seconds(settings.refreshReuseGraceSeconds),
  tokenLeeway: Duration.seconds(settings.jwtLeewaySeconds),
  blacklistEnabled: settings.blacklistEnabled,
  loginField: settings.loginField,
  lockout: settings.lockoutEnabled
    ? Option.some({
        maxAttempts: settings.maxLoginAttempts,
        duration: Duration.minutes(settings.lockoutDurationMinutes)
      })
    : Option.none(),
  preventRegistrationEnumeration: settings.preventRegistrationEnumeration,
  passwordPolicy: makePasswordPolicy({
    min_length: settings.passwordMinLength,
    max_length: settings.passwordMaxLength
  }),
  profile: { protectedFields: new Set(protectedUserFields), editableFields: new Set() }
})

/** The repositories for DATABASE_URL; SQLite is migrated before it is used. */
export const persistence = (database: DatabaseUrl) => {
  switch (database.kind) {
    case "memory":
      return Layer.merge(UserRepoMemory.layer, RefreshTokenRepoMemory.layer)
    case "sqlite":
      return Layer.merge(UserRepoSql.layer, RefreshTokenRepoSql.layer).pipe(
        Layer.provide(SqliteDatabase.layer(database.filename))
      )
    case "postgres":
      return Layer.die("PostgreSQL is not supported by this version yet")
  }
}

/** The use cases, over whatever adapters are provided for their ports. */
export const useCases = Layer.mergeAll(Accounts.Default, Sessions.Default).pipe(Layer.provideMerge(Tokens.Default))

/**
 * Every port adapter and use case for a deployment, chosen from its settings: the one place
 * where the application meets the infrastructure.
 */
export const application = (settings: Settings, secretKey: Redacted.Redacted<string>) => {
  const ports = Layer.mergeAll(
    persistence(settings.databaseUrl),
    BlacklistMemory.layer,
    RateLimiterMemory.layer,
    AttemptCounterMemory.layer,
    PasswordHasherArgon2.layer(),
    NodeCryptography.layer(secretKey),
    JoseTokenSigner.layer({
      algorithm: settings.jwtAlgorithm as JoseTokenSigner.HmacAlgorithm,
      secretKey,
      issuer: settings.jwtIssuer,
      audience: settings.jwtAudience,
      leewaySeconds: settings.jwtLeewaySeconds
    }),
    Layer.succeed(AuthPolicy, authPolicy(settings))
  )
  return useCases.pipe(Layer.provideMerge(ports))
}

/** Rebuilds what an in-memory blacklist lost in a restart; logs how much. */
export const restoreRevocations = Effect.flatMap(Tokens, (tokens) => tokens.restoreRevocations()).pipe(
  Effect.tap((restored) => Effect.logInfo("revocations restored", { families: restored }))
)
