import { randomBytes } from "node:crypto"
import { Duration, Layer, Metric, Option, Redacted } from "effect"
import { AuthPolicy } from "../application/AuthPolicy.js"
import { protectionsLocal } from "../application/metrics.js"
import { OAuthProviders } from "../application/ports/OAuthProviders.js"
import { PublishedKeys } from "../application/ports/PublishedKeys.js"
import type { Deployment } from "../config/Deployment.js"
import { oauthProviders } from "../config/oauthProviders.js"
import type { Settings } from "../config/Settings.js"
import { isLoopbackHost } from "../domain/Here.js"
import { withReplacements } from "../domain/Mail.js"
import * as CryptographyNode from "../infrastructure/crypto/CryptographyNode.js"
import * as CsrfTokensHmac from "../infrastructure/crypto/CsrfTokensHmac.js"
import * as PasswordHasherArgon2 from "../infrastructure/crypto/PasswordHasherArgon2.js"
import * as TokenSignerHmac from "../infrastructure/crypto/TokenSignerHmac.js"
import * as EventsInProcess from "../infrastructure/events/EventsInProcess.js"
import * as MailerConsole from "../infrastructure/mail/MailerConsole.js"
import * as MailerDev from "../infrastructure/mail/MailerDev.js"
import { builtInTemplates } from "../infrastructure/mail/templates.js"
import * as AttemptCounterMemory from "../infrastructure/memory/AttemptCounterMemory.js"
import * as BlacklistMemory from "../infrastructure/memory/BlacklistMemory.js"
import * as ChallengeStoreMemory from "../infrastructure/memory/ChallengeStoreMemory.js"
import * as RateLimiterMemory from "../infrastructure/memory/RateLimiterMemory.js"
import type * as RedisClient from "../infrastructure/redis/RedisClient.js"
import { StoreTimeout } from "../infrastructure/storeTimeout.js"
import * as WebAuthnOnDemand from "../infrastructure/webauthn/WebAuthnOnDemand.js"
import * as WebhookEndpointsStored from "../infrastructure/webhooks/WebhookEndpointsStored.js"
import * as WebhookTransportHttp from "../infrastructure/webhooks/WebhookTransportHttp.js"
import { imported } from "./imported.js"
import { authPolicy, uniqueFields } from "./policy.js"
import { providerPorts } from "./provider.js"
import { database } from "./stores.js"

/** SECRET_KEY, or a random key for this run when none is set. */
export const resolveSecretKey = (settings: Settings): Redacted.Redacted<string> =>
  Option.getOrElse(settings.tokens.secretKey, () => Redacted.make(randomBytes(48).toString("base64url")))

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
 * fallbacks are never used to verify a ceremony. With passkeys off it is loaded on demand.
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
  return passkeys.passkeyEnabled
    ? imported(
        () => import("../infrastructure/webauthn/WebAuthnSimplewebauthn.js"),
        (simplewebauthn) => simplewebauthn.layer(options)
      )
    : WebAuthnOnDemand.layer(options)
}

/**
 * Which built-in mailer sends: MAILER when set; unset, SMTP when SMTP_URL is set, else the
 * development inbox for a laptop's service (one process listening on loopback, its PUBLIC_URL a
 * loopback one: a deployment behind a proxy names its public address there; with several
 * workers each would keep its own mails, and the inbox would show one worker's), else none.
 */
export const mailerKind = ({ mail, server }: Settings): "smtp" | "console" | "dev" | "none" =>
  Option.getOrElse(mail.mailer, () => {
    if (Option.isSome(mail.smtpUrl)) return "smtp"
    const laptop = server.workers === 1 && isLoopbackHost(server.host) && isLoopbackHost(server.publicUrl.hostname)
    return laptop ? "dev" : "none"
  })

/** The built-in mailer of `mailerKind`, none when mails are dropped. */
export const mailer = (settings: Settings) => {
  switch (mailerKind(settings)) {
    case "console":
      return Option.some(MailerConsole.layer)
    case "dev":
      return Option.some(MailerDev.layer)
    default:
      return Option.map(settings.mail.smtpUrl, (url) =>
        imported(
          () => import("../infrastructure/mail/MailerSmtp.js"),
          (smtp) => smtp.layer({ url, from: settings.mail.mailFrom })
        )
      )
  }
}

/** The deployment's event handlers, and the built-in mailer for the send events they leave to it. */
const events = (settings: Settings, deployment: Deployment) => {
  const layer = EventsInProcess.layer({
    handlers: deployment.events ?? {},
    templates: withReplacements(builtInTemplates, settings.mail.mailTemplates),
    mail: {
      publicUrl: settings.server.publicUrl,
      product: settings.server.productName,
      providerSignIn: settings.oidc.providerEnabled
        ? `${settings.server.publicUrl.href.replace(/\/+$/, "")}${settings.server.authPrefix}/oauth2/sign-in`
        : undefined
    }
  })
  // The development inbox's mails stay readable (its page), as DevInbox; with another mailer it is empty.
  if (mailerKind(settings) === "dev") return layer.pipe(Layer.provideMerge(MailerDev.layer))
  const sent = Option.match(mailer(settings), {
    onNone: () => layer,
    onSome: (mail) => layer.pipe(Layer.provide(mail))
  })
  return Layer.merge(sent, MailerDev.noInbox)
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
  return Layer.provideMerge(providerPorts(settings), Layer.provideMerge(webhookEndpoints(settings), adapters))
}

/** The transport that reaches webhook endpoints. */
const webhookTransport = ({ webhooks }: Settings) => WebhookTransportHttp.layer(webhooks.allowPrivate)

/** The endpoints of WEBHOOKS and those the CLI stored, over the stores and the keys of `adapters`. */
const webhookEndpoints = ({ webhooks }: Settings) => WebhookEndpointsStored.layer(webhooks.endpoints)
