import { randomBytes } from "node:crypto"
import type { SqlError } from "@effect/sql/SqlError"
import { type ConfigError, Duration, Effect, Layer, Option, Redacted } from "effect"
import { AccessControl } from "../application/AccessControl.js"
import { Accounts } from "../application/Accounts.js"
import { ActiveSessions } from "../application/ActiveSessions.js"
import { Admin } from "../application/Admin.js"
import { AuthPolicy } from "../application/AuthPolicy.js"
import { PasswordReset } from "../application/PasswordReset.js"
import type { RefreshTokenRepo } from "../application/ports/RefreshTokenRepo.js"
import type { RoleRepo } from "../application/ports/RoleRepo.js"
import type { UserRepo } from "../application/ports/UserRepo.js"
import { Readiness } from "../application/Readiness.js"
import { Sessions } from "../application/Sessions.js"
import { Tokens } from "../application/Tokens.js"
import { Verification } from "../application/Verification.js"
import { type Deployment, profileRules } from "../config/Deployment.js"
import { type DatabaseUrl, PREFIX, type Settings } from "../config/Settings.js"
import { sendEvents } from "../domain/Events.js"
import * as HmacCsrfTokens from "./crypto/HmacCsrfTokens.js"
import * as JoseTokenSigner from "./crypto/JoseTokenSigner.js"
import * as NodeCryptography from "./crypto/NodeCryptography.js"
import * as PasswordHasherArgon2 from "./crypto/PasswordHasherArgon2.js"
import { customClaims, loginFieldProblems, passwordPolicy, uniqueFields } from "./deployment.js"
import * as InProcessEvents from "./events/InProcessEvents.js"
import * as ConsoleMailer from "./mail/ConsoleMailer.js"
import * as SmtpMailer from "./mail/SmtpMailer.js"
import * as AttemptCounterMemory from "./memory/AttemptCounterMemory.js"
import * as BlacklistMemory from "./memory/BlacklistMemory.js"
import * as RateLimiterMemory from "./memory/RateLimiterMemory.js"
import * as RefreshTokenRepoMemory from "./memory/RefreshTokenRepoMemory.js"
import * as RoleRepoMemory from "./memory/RoleRepoMemory.js"
import * as UserRepoMemory from "./memory/UserRepoMemory.js"
import * as AttemptCounterRedis from "./redis/AttemptCounterRedis.js"
import * as BlacklistRedis from "./redis/BlacklistRedis.js"
import * as RateLimiterRedis from "./redis/RateLimiterRedis.js"
import * as RedisClient from "./redis/RedisClient.js"
import * as PgDatabase from "./sql/PgDatabase.js"
import * as RefreshTokenRepoSql from "./sql/RefreshTokenRepoSql.js"
import * as RoleRepoSql from "./sql/RoleRepoSql.js"
import * as SqliteDatabase from "./sql/SqliteDatabase.js"
import * as UserRepoSql from "./sql/UserRepoSql.js"
import type { UserRepoOptions } from "./users.js"

/**
 * Settings this build accepts as valid but cannot honour yet. Refusing them at start-up is
 * safer than ignoring them: a deployment asking for cookie transport must not get bearer tokens.
 */
export const notYetSupported = (settings: Settings, deployment: Deployment = {}): ReadonlyArray<string> => [
  ...loginFieldProblems(settings, deployment),
  ...missingFeatures(settings)
]

/** The features settings ask for that this build does not have, whatever the deployment. */
export const missingFeatures = (settings: Settings): ReadonlyArray<string> => {
  const problems: Array<string> = []
  const refuse = (name: string, what: string) =>
    problems.push(`${PREFIX}${name}: ${what} is not supported by this version yet`)
  if (!settings.jwtAlgorithm.startsWith("HS")) refuse("JWT_ALGORITHM", settings.jwtAlgorithm)
  if (settings.passkeyEnabled) refuse("PASSKEY_ENABLED", "passkey sign-in")
  if (settings.oauthProviders.length > 0) refuse("OAUTH_*", "OAuth sign-in")
  return problems
}

/** SECRET_KEY, or a random key for this run when none is set. */
export const resolveSecretKey = (settings: Pick<Settings, "secretKey">): Redacted.Redacted<string> =>
  Option.getOrElse(settings.secretKey, () => Redacted.make(randomBytes(48).toString("base64url")))

export const authPolicy = (settings: Settings, deployment: Deployment = {}): AuthPolicy["Type"] => ({
  accessTokenTtl: Duration.minutes(settings.accessTokenExpireMinutes),
  refreshTokenTtl: Duration.days(settings.refreshTokenExpireDays),
  emailVerifyTtl: Duration.minutes(settings.emailVerifyExpireMinutes),
  passwordResetTtl: Duration.minutes(settings.passwordResetExpireMinutes),
  sendVerificationOnRegister: settings.sendVerificationOnRegister,
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
  passwordPolicy: passwordPolicy(settings, deployment),
  profile: profileRules(settings.loginField, deployment),
  customClaims: customClaims(deployment)
})

/** The repositories for DATABASE_URL, making user ids of USER_ID_TYPE; a database is migrated before it is used. */
export const persistence = (
  database: DatabaseUrl,
  users: UserRepoOptions = {}
): Layer.Layer<UserRepo | RefreshTokenRepo | RoleRepo, ConfigError.ConfigError | SqlError> => {
  switch (database.kind) {
    case "memory":
      return Layer.mergeAll(UserRepoMemory.layerWith(users), RefreshTokenRepoMemory.layer, RoleRepoMemory.layer)
    case "sqlite":
      return Layer.mergeAll(UserRepoSql.layerWith(users), RefreshTokenRepoSql.layer, RoleRepoSql.layer).pipe(
        Layer.provide(SqliteDatabase.layer(database.filename, users))
      )
    case "postgres":
      return Layer.mergeAll(UserRepoSql.layerWith(users), RefreshTokenRepoSql.layer, RoleRepoSql.layer).pipe(
        Layer.provide(PgDatabase.layer(database.url, users))
      )
  }
}

/** Revocations, rate limits and lockouts: in Redis when REDIS_URL is set (one shared connection), else in memory. */
export const protections = (redisUrl: Settings["redisUrl"]) =>
  Option.match(redisUrl, {
    onNone: () => Layer.mergeAll(BlacklistMemory.layer, RateLimiterMemory.layer, AttemptCounterMemory.layer),
    onSome: (url) =>
      Layer.mergeAll(BlacklistRedis.layer, RateLimiterRedis.layer, AttemptCounterRedis.layer).pipe(
        Layer.provide(RedisClient.layer({ url }))
      )
  })

/** The use cases, over whatever adapters are provided for their ports. */
export const useCases = Layer.mergeAll(
  Accounts.Default,
  Sessions.Default,
  PasswordReset.Default,
  ActiveSessions.Default,
  Admin.Default,
  AccessControl.Default,
  Readiness.Default
).pipe(Layer.provideMerge(Layer.merge(Tokens.Default, Verification.Default)))

/** The built-in mailer: SMTP when SMTP_URL is set, the log with MAILER=console, else none. */
const mailer = (settings: Settings) => {
  if (Option.contains(settings.mailer, "console")) return Option.some(ConsoleMailer.layer)
  return Option.map(settings.smtpUrl, (url) => SmtpMailer.layer({ url, from: settings.mailFrom }))
}

/** The deployment's event handlers, and the mailer for the send events they leave to it. */
export const events = (settings: Settings, deployment: Deployment) => {
  const layer = InProcessEvents.layer({ handlers: deployment.events ?? {}, publicUrl: settings.publicUrl })
  return Option.match(mailer(settings), { onNone: () => layer, onSome: (mail) => layer.pipe(Layer.provide(mail)) })
}

/** What start-up should warn about in how mail is handled. */
export const deliveryWarnings = (settings: Settings, deployment: Deployment): ReadonlyArray<string> => {
  if (Option.contains(settings.mailer, "console")) {
    return [`${PREFIX}MAILER=console: mails, tokens included, are written to the log instead of being sent`]
  }
  if (Option.isSome(mailer(settings))) return []
  return sendEvents
    .filter((name) => deployment.events?.[name] === undefined)
    .map(
      (name) =>
        `${name} has no handler and no mailer is set (${PREFIX}SMTP_URL or ${PREFIX}MAILER=console): its tokens are generated and dropped`
    )
}

/** Every port adapter a deployment's settings choose. */
export const ports = (settings: Settings, secretKey: Redacted.Redacted<string>, deployment: Deployment = {}) =>
  Layer.mergeAll(
    events(settings, deployment),
    persistence(settings.databaseUrl, {
      idType: settings.userIdType,
      uniqueFields: uniqueFields(settings, deployment)
    }),
    protections(settings.redisUrl),
    PasswordHasherArgon2.layer(),
    NodeCryptography.layer(secretKey),
    HmacCsrfTokens.layer(secretKey),
    JoseTokenSigner.layer({
      algorithm: settings.jwtAlgorithm as JoseTokenSigner.HmacAlgorithm,
      secretKey,
      issuer: settings.jwtIssuer,
      audience: settings.jwtAudience,
      leewaySeconds: settings.jwtLeewaySeconds
    }),
    Layer.succeed(AuthPolicy, authPolicy(settings, deployment))
  )

/**
 * The use cases over the adapters chosen from the settings: the one place where the
 * application meets the infrastructure.
 */
export const application = (settings: Settings, secretKey: Redacted.Redacted<string>, deployment: Deployment = {}) =>
  useCases.pipe(Layer.provideMerge(ports(settings, secretKey, deployment)))

/** Rebuilds what an in-memory blacklist (or a Redis) lost in a restart; logs how much. A Redis down does not stop start-up. */
export const restoreRevocations = Effect.flatMap(Tokens, (tokens) => tokens.restoreRevocations()).pipe(
  Effect.tap((restored) => Effect.logInfo("revocations restored", { families: restored })),
  Effect.catchTag("StoreUnavailableError", (error) =>
    Effect.logWarning(`revocations not restored: the ${error.store} store is unavailable`)
  )
)
