import { randomBytes } from "node:crypto"
import type { MigrationError } from "@effect/sql/Migrator"
import type * as SqlClient from "@effect/sql/SqlClient"
import type { SqlError } from "@effect/sql/SqlError"
import { type ConfigError, Duration, Effect, Layer, Metric, Option, Redacted } from "effect"
import { AuthPolicy } from "../application/AuthPolicy.js"
import { protectionsLocal } from "../application/metrics.js"
import { OAuthProviders } from "../application/ports/OAuthProviders.js"
import { PublishedKeys } from "../application/ports/PublishedKeys.js"
import type { RefreshTokenRepo } from "../application/ports/RefreshTokenRepo.js"
import type { StoreSpace } from "../application/ports/StoreSpace.js"
import type { TokenHolders } from "../application/ports/TokenHolders.js"
import { WebAuthn } from "../application/ports/WebAuthn.js"
import type { Deployment } from "../config/Deployment.js"
import { oauthProviders } from "../config/oauthProviders.js"
import type { Settings } from "../config/Settings.js"
import type { DatabaseUrl } from "../config/sections/storage.js"
import { withReplacements } from "../domain/Mail.js"
import * as CryptographyNode from "../infrastructure/crypto/CryptographyNode.js"
import * as CsrfTokensHmac from "../infrastructure/crypto/CsrfTokensHmac.js"
import * as PasswordHasherArgon2 from "../infrastructure/crypto/PasswordHasherArgon2.js"
import * as TokenSignerHmac from "../infrastructure/crypto/TokenSignerHmac.js"
import * as EventsInProcess from "../infrastructure/events/EventsInProcess.js"
import * as MailerConsole from "../infrastructure/mail/MailerConsole.js"
import { builtInTemplates } from "../infrastructure/mail/templates.js"
import * as AddressChangesMemory from "../infrastructure/memory/AddressChangesMemory.js"
import * as AttemptCounterMemory from "../infrastructure/memory/AttemptCounterMemory.js"
import * as AuditLogMemory from "../infrastructure/memory/AuditLogMemory.js"
import * as BlacklistMemory from "../infrastructure/memory/BlacklistMemory.js"
import * as ChallengeStoreMemory from "../infrastructure/memory/ChallengeStoreMemory.js"
import * as EmailSignInRequestsMemory from "../infrastructure/memory/EmailSignInRequestsMemory.js"
import * as OAuthAccountRepoMemory from "../infrastructure/memory/OAuthAccountRepoMemory.js"
import * as OutboxMemory from "../infrastructure/memory/OutboxMemory.js"
import * as PasskeyRepoMemory from "../infrastructure/memory/PasskeyRepoMemory.js"
import * as RateLimiterMemory from "../infrastructure/memory/RateLimiterMemory.js"
import * as RefreshTokenRepoMemory from "../infrastructure/memory/RefreshTokenRepoMemory.js"
import * as RoleRepoMemory from "../infrastructure/memory/RoleRepoMemory.js"
import * as StoreSpaceNone from "../infrastructure/memory/StoreSpaceNone.js"
import * as TokenHoldersMemory from "../infrastructure/memory/TokenHoldersMemory.js"
import * as TransactionMemory from "../infrastructure/memory/TransactionMemory.js"
import * as UserRepoMemory from "../infrastructure/memory/UserRepoMemory.js"
import * as WebhookEndpointRepoMemory from "../infrastructure/memory/WebhookEndpointRepoMemory.js"
import type * as RedisClient from "../infrastructure/redis/RedisClient.js"
import * as AddressChangesSql from "../infrastructure/sql/AddressChangesSql.js"
import * as AuditLogSql from "../infrastructure/sql/AuditLogSql.js"
import * as EmailSignInRequestsSql from "../infrastructure/sql/EmailSignInRequestsSql.js"
import type { SchemaOptions } from "../infrastructure/sql/migrations.js"
import * as OAuthAccountRepoSql from "../infrastructure/sql/OAuthAccountRepoSql.js"
import * as OutboxSql from "../infrastructure/sql/OutboxSql.js"
import * as PasskeyRepoSql from "../infrastructure/sql/PasskeyRepoSql.js"
import * as RefreshTokenRepoSql from "../infrastructure/sql/RefreshTokenRepoSql.js"
import * as RoleRepoSql from "../infrastructure/sql/RoleRepoSql.js"
import * as TokenHoldersSql from "../infrastructure/sql/TokenHoldersSql.js"
import * as TransactionSql from "../infrastructure/sql/TransactionSql.js"
import * as UserRepoSql from "../infrastructure/sql/UserRepoSql.js"
import * as WebhookEndpointRepoSql from "../infrastructure/sql/WebhookEndpointRepoSql.js"
import { StoreTimeout } from "../infrastructure/storeTimeout.js"
import type { UserRepoOptions } from "../infrastructure/users.js"
import * as WebhookEndpointsStored from "../infrastructure/webhooks/WebhookEndpointsStored.js"
import * as WebhookTransportHttp from "../infrastructure/webhooks/WebhookTransportHttp.js"
import { authPolicy, uniqueFields } from "./policy.js"

/** SECRET_KEY, or a random key for this run when none is set. */
export const resolveSecretKey = (settings: Settings): Redacted.Redacted<string> =>
  Option.getOrElse(settings.tokens.secretKey, () => Redacted.make(randomBytes(48).toString("base64url")))

/**
 * The layer of an adapter whose module is imported when the layer is built, not before: the
 * driver or protocol library under it (pg, ioredis, nodemailer, simplewebauthn...) costs start-up
 * time only to the settings that choose it.
 */
const imported = <M, A, E, R>(module: () => Promise<M>, build: (adapter: M) => Layer.Layer<A, E, R>) =>
  Layer.unwrapEffect(Effect.map(Effect.promise(module), build))

/**
 * A SQL database: the layer of its migrated connection, and its migration on a connection of its
 * own; and the adapters a database in a file of its own has (SQLite's).
 */
interface SqlDatabase {
  readonly layer: (options: SchemaOptions) => Layer.Layer<SqlClient.SqlClient, ConfigError.ConfigError | SqlError>
  readonly migrate: (
    options: SchemaOptions
  ) => Effect.Effect<ReadonlyArray<readonly [number, string]>, MigrationError | SqlError | ConfigError.ConfigError>
  readonly files?: FileAdapters
}

/**
 * What a database in a file of its own adds to the plain adapters: the hot paths' fast ones
 * (infrastructure/sql/fast/, each held by its port's contract suite), and the room it gives back.
 */
export interface FileAdapters {
  readonly tokenHolders?: Layer.Layer<TokenHolders, SqlError, SqlClient.SqlClient>
  readonly refreshTokens?: Layer.Layer<RefreshTokenRepo, SqlError, SqlClient.SqlClient>
  readonly storeSpace?: Layer.Layer<StoreSpace, never, SqlClient.SqlClient>
}

/** The SQL database of DATABASE_URL; none for the memory store. */
const sqlDatabase = (url: DatabaseUrl): Option.Option<SqlDatabase> => {
  switch (url.kind) {
    case "memory":
      return Option.none()
    case "sqlite": {
      const sqlite = () => import("../infrastructure/sql/SqliteDatabase.js")
      return Option.some({
        layer: (options) => imported(sqlite, (db) => db.layer(url.filename, options)),
        migrate: (options) =>
          Effect.flatMap(Effect.promise(sqlite), (db) =>
            db.prepare(options).pipe(Effect.provide(db.client(url.filename)))
          ),
        // A file can be read and written on connections of its own; another connection to
        // `:memory:` would be another database.
        ...(url.filename === ":memory:" ? {} : { files: sqliteFileAdapters(url.filename) })
      })
    }
    case "postgres": {
      const pg = () => import("../infrastructure/sql/PgDatabase.js")
      return Option.some({
        layer: (options) => imported(pg, (db) => db.layer(url.url, options)),
        migrate: (options) =>
          Effect.flatMap(Effect.promise(pg), (db) =>
            db.prepare(options).pipe(Effect.provide(db.client(url.url, { maxConnections: 1 })))
          )
      })
    }
  }
}

/**
 * Every repository over the store's own adapters. The passkey and OAuth account repositories read
 * owners through the users' one, so it is the same instance.
 */
export const memoryRepositories = (options: UserRepoOptions = {}) =>
  TokenHoldersMemory.layer.pipe(
    Layer.provideMerge(
      Layer.mergeAll(
        RefreshTokenRepoMemory.layer,
        RoleRepoMemory.layer,
        PasskeyRepoMemory.layer,
        OAuthAccountRepoMemory.layer,
        AuditLogMemory.layer,
        EmailSignInRequestsMemory.layer,
        OutboxMemory.layer,
        WebhookEndpointRepoMemory.layer,
        StoreSpaceNone.layer,
        TransactionMemory.layer
      )
    ),
    Layer.provideMerge(UserRepoMemory.layerWith(options)),
    // The users' repository reads the addresses an address change's undo reserves.
    Layer.provideMerge(AddressChangesMemory.layer)
  )

/** The adapters of a SQLite file of its own. */
export const sqliteFileAdapters = (filename: string): FileAdapters => ({
  storeSpace: imported(
    () => import("../infrastructure/sql/StoreSpaceSqlite.js"),
    (space) => space.layer(filename)
  ),
  tokenHolders: imported(
    () => import("../infrastructure/sql/fast/TokenHoldersSqliteReader.js"),
    (reader) => reader.layer(filename)
  ),
  refreshTokens: imported(
    () => import("../infrastructure/sql/fast/RefreshTokenRotationSqlite.js"),
    (rotation) => rotation.layer(filename)
  )
})

/** Every repository over a SQL client, SQLite or PostgreSQL alike; the plain adapters unless `files` has others. */
export const sqlRepositories = (options: UserRepoOptions = {}, files: FileAdapters = {}) =>
  Layer.mergeAll(
    files.refreshTokens ?? RefreshTokenRepoSql.layer,
    RoleRepoSql.layer,
    PasskeyRepoSql.layer,
    OAuthAccountRepoSql.layer,
    AuditLogSql.layer,
    EmailSignInRequestsSql.layer,
    AddressChangesSql.layer,
    OutboxSql.layer,
    WebhookEndpointRepoSql.layer,
    files.storeSpace ?? StoreSpaceNone.layer,
    files.tokenHolders ?? TokenHoldersSql.layer,
    TransactionSql.layer
  ).pipe(Layer.provideMerge(UserRepoSql.layerWith(options)))

/**
 * The repositories over the database of DATABASE_URL, migrated (the deployment's unique fields
 * included) before they use it. Used by serve, by every CLI command that touches storage and by
 * the tests' harness.
 */
export const database = (url: DatabaseUrl, options: UserRepoOptions = {}) =>
  Option.match(sqlDatabase(url), {
    onNone: () => memoryRepositories(options),
    onSome: (sql) => sqlRepositories(options, sql.files).pipe(Layer.provide(sql.layer(options)))
  })

/** Applies the pending migrations of DATABASE_URL; answers the ones applied, none for the memory store. */
export const migrate = (url: DatabaseUrl, options: SchemaOptions = {}) =>
  Option.match(sqlDatabase(url), {
    onNone: () => Effect.succeedNone,
    onSome: (sql) => Effect.map(sql.migrate(options), Option.some)
  })

/**
 * What every process of a deployment must agree on: in Redis when REDIS_URL is set, else in
 * memory. The rate limits and lockout fall back to memory while Redis is unusable, never open;
 * the blacklist fails closed.
 */
const sharedState = (redis: Option.Option<Layer.Layer<RedisClient.RedisClient>>) =>
  Option.match(redis, {
    onNone: () =>
      Layer.mergeAll(
        BlacklistMemory.layer,
        RateLimiterMemory.layer,
        AttemptCounterMemory.layer,
        // Nothing to fall back from, but the gauge is there for whoever watches it.
        Layer.effectDiscard(Metric.set(protectionsLocal, 0))
      ),
    onSome: (connection) =>
      imported(
        () =>
          Promise.all([
            import("../infrastructure/redis/BlacklistRedis.js"),
            import("../infrastructure/redis/LocalFallback.js")
          ]),
        ([blacklist, fallback]) => Layer.merge(blacklist.layer, fallback.protections)
      ).pipe(Layer.provide(connection))
  })

/**
 * Where passkey challenges live (PASSKEY_CHALLENGE_BACKEND): memory is per process, so several
 * workers need Redis, on the one shared connection.
 */
const challengeStore = (settings: Settings, redis: Option.Option<Layer.Layer<RedisClient.RedisClient>>) =>
  Option.match(
    Option.filter(redis, () => settings.passkeys.passkeyChallengeBackend === "redis"),
    {
      onNone: () => ChallengeStoreMemory.layer,
      onSome: (connection) =>
        imported(
          () => import("../infrastructure/redis/ChallengeStoreRedis.js"),
          (challenges) => challenges.layer
        ).pipe(Layer.provide(connection))
    }
  )

/**
 * The WebAuthn relying party of the passkey settings. Only the passkey group uses it, and it is
 * served only with PASSKEY_ENABLED, which start-up refuses without an RP ID and name: the
 * fallbacks are never used to verify a ceremony. With passkeys off, simplewebauthn and the ASN.1
 * libraries under it are loaded only if the port is called after all (by code composing the
 * use cases itself), so that serving without passkeys does not pay for them.
 */
const webAuthn = ({ passkeys }: Settings) => {
  const options = {
    rpId: Option.getOrElse(passkeys.passkeyRpId, () => "localhost"),
    rpName: Option.getOrElse(passkeys.passkeyRpName, () => "Portcullis"),
    origins: passkeys.passkeyOrigins,
    requireUserVerification: passkeys.passkeyRequireUserVerification,
    // The browser gives the user as long as the challenge lives, no longer.
    timeout: Duration.seconds(passkeys.passkeyChallengeTtl)
  }
  const adapter = () => import("../infrastructure/webauthn/WebAuthnSimplewebauthn.js")
  if (passkeys.passkeyEnabled) return imported(adapter, (simplewebauthn) => simplewebauthn.layer(options))
  return Layer.effect(
    WebAuthn,
    Effect.map(
      Effect.cached(Effect.map(Effect.promise(adapter), (simplewebauthn) => simplewebauthn.make(options))),
      (relyingParty) =>
        WebAuthn.of({
          registrationOptions: (user, exclude) =>
            Effect.flatMap(relyingParty, (rp) => rp.registrationOptions(user, exclude)),
          verifyRegistration: (credential, challenge) =>
            Effect.flatMap(relyingParty, (rp) => rp.verifyRegistration(credential, challenge)),
          authenticationOptions: (allow) => Effect.flatMap(relyingParty, (rp) => rp.authenticationOptions(allow)),
          verifyAuthentication: (credential, challenge, passkey) =>
            Effect.flatMap(relyingParty, (rp) => rp.verifyAuthentication(credential, challenge, passkey))
        })
    )
  )
}

/** The built-in mailer: the log with MAILER=console, SMTP when SMTP_URL is set, else none. */
export const mailer = ({ mail }: Settings) =>
  Option.contains(mail.mailer, "console")
    ? Option.some(MailerConsole.layer)
    : Option.map(mail.smtpUrl, (url) =>
        imported(
          () => import("../infrastructure/mail/MailerSmtp.js"),
          (smtp) => smtp.layer({ url, from: mail.mailFrom })
        )
      )

/** The deployment's event handlers, and the built-in mailer for the send events they leave to it. */
const events = (settings: Settings, deployment: Deployment) => {
  const layer = EventsInProcess.layer({
    handlers: deployment.events ?? {},
    templates: withReplacements(builtInTemplates, settings.mail.mailTemplates),
    mail: { publicUrl: settings.server.publicUrl, product: settings.server.productName }
  })
  return Option.match(mailer(settings), { onNone: () => layer, onSome: (mail) => layer.pipe(Layer.provide(mail)) })
}

/**
 * The token signer of JWT_ALGORITHM, and the public keys it publishes: the private key and the
 * earlier public keys for the asymmetric algorithms (their presence is checked with the
 * settings), SECRET_KEY and nothing published for the HMACs. Those keys sign access tokens only;
 * every other token is signed with a key derived from SECRET_KEY, random for the run when unset.
 */
const tokenSigner = ({ tokens }: Settings, secretKey: Redacted.Redacted<string>) => {
  const claims = { issuer: tokens.jwtIssuer, audience: tokens.jwtAudience, leewaySeconds: tokens.jwtLeewaySeconds }
  const { jwtAlgorithm: algorithm } = tokens
  if (algorithm === "HS256" || algorithm === "HS384" || algorithm === "HS512") {
    return Layer.merge(
      TokenSignerHmac.layer({ algorithm, secretKey, ...claims }),
      Layer.succeed(PublishedKeys, PublishedKeys.of({ jwks: { keys: [] } }))
    )
  }
  return Option.match(tokens.jwtPrivateKey, {
    onNone: () => Layer.die(new Error(`JWT_ALGORITHM=${algorithm} has no JWT_PRIVATE_KEY`)),
    onSome: (signingKey) =>
      imported(
        () => import("../infrastructure/crypto/TokenSignerAsymmetric.js"),
        (asymmetric) =>
          asymmetric.layer({
            signingKey: Redacted.value(signingKey),
            verifyKeys: tokens.jwtVerifyKeys,
            secretKey,
            ...claims
          })
      )
  })
}

const crypto = (settings: Settings, secretKey: Redacted.Redacted<string>) =>
  Layer.mergeAll(
    PasswordHasherArgon2.layer(PasswordHasherArgon2.recommended, settings.server.workers),
    CryptographyNode.layer(secretKey),
    CsrfTokensHmac.layer(secretKey),
    tokenSigner(settings, secretKey)
  )

/**
 * The OAuth providers of the settings and of the deployment's code; calls to them time out after
 * 10 s. With none configured there is nothing to call, and oauth4webapi is not loaded.
 */
const oauthProviderClients = (settings: Settings, deployment: Deployment) => {
  const providers = oauthProviders(settings, deployment)
  return providers.length === 0
    ? Layer.succeed(OAuthProviders, OAuthProviders.of({ names: [], get: () => Option.none() }))
    : imported(
        () => import("../infrastructure/oauth/OAuthProvidersOauth4webapi.js"),
        (oauth) => oauth.layer({ providers, pkce: settings.oauth.oauthPkceEnabled })
      )
}

/**
 * Every port adapter the settings choose, and the rules the use cases follow. Redis-backed
 * ports share one connection.
 */
export const ports = (settings: Settings, deployment: Deployment = {}) => {
  const redis = Option.map(settings.storage.redisUrl, (url) =>
    imported(
      () => import("../infrastructure/redis/RedisClient.js"),
      (client) => client.layer({ url })
    )
  )
  const adapters = Layer.mergeAll(
    database(settings.storage.databaseUrl, {
      idType: settings.storage.userIdType,
      uniqueFields: uniqueFields(settings, deployment)
    }),
    sharedState(redis),
    challengeStore(settings, redis),
    webAuthn(settings),
    events(settings, deployment),
    oauthProviderClients(settings, deployment),
    crypto(settings, resolveSecretKey(settings)),
    Layer.succeed(
      StoreTimeout,
      settings.storage.databaseUrl.kind === "postgres"
        ? Duration.seconds(settings.storage.storeTimeoutSeconds)
        : Duration.infinity
    ),
    webhookTransport(settings),
    Layer.succeed(AuthPolicy, authPolicy(settings, deployment))
  )
  return Layer.provideMerge(webhookEndpoints(settings), adapters)
}

/** The transport that reaches webhook endpoints. */
const webhookTransport = ({ webhooks }: Settings) => WebhookTransportHttp.layer(webhooks.allowPrivate)

/** The endpoints of WEBHOOKS and those the CLI stored, over the stores and the keys of `adapters`. */
const webhookEndpoints = ({ webhooks }: Settings) => WebhookEndpointsStored.layer(webhooks.endpoints)
