import { Effect, Option } from "effect"
import type { Deployment } from "../config/Deployment.js"
import { oauthProviders, providerClashes } from "../config/oauthProviders.js"
import { PREFIX } from "../config/reader.js"
import type { Settings } from "../config/Settings.js"
import { isAsymmetric } from "../config/sections/tokens.js"
import { sendEvents } from "../domain/Events.js"
import { underPublicUrl } from "../domain/Here.js"
import { DEV_INBOX_PATH } from "../interfaces/http/devInbox.js"
import { mailer, mailerKind } from "./adapters.js"
import { features } from "./features.js"
import { loginFieldProblems } from "./policy.js"

/** The features the settings ask for that this build does not have, whatever the deployment. */
export const missingFeatures = (settings: Settings): ReadonlyArray<string> =>
  features.flatMap((feature) => feature.unsupported?.(settings) ?? [])

/**
 * Settings this build accepts as valid but cannot honour with this deployment. Refusing them at
 * start-up is safer than ignoring them: a deployment asking for passkeys must not run without.
 */
export const notYetSupported = (settings: Settings, deployment: Deployment = {}): ReadonlyArray<string> => [
  ...loginFieldProblems(settings, deployment),
  ...providerClashes(settings, deployment),
  ...missingFeatures(settings)
]

/** What start-up should warn about in how mail is handled. */
const deliveryWarnings = (settings: Settings, deployment: Deployment): ReadonlyArray<string> => {
  if (mailerKind(settings) === "console") {
    return [`${PREFIX}MAILER=console: mails, tokens included, are printed on stderr instead of being sent`]
  }
  if (mailerKind(settings) === "dev") {
    return [
      `mails are kept, not sent (${PREFIX}MAILER=dev): read them at ${underPublicUrl(settings.server.publicUrl, DEV_INBOX_PATH).href} (this machine only); set ${PREFIX}SMTP_URL to send them`
    ]
  }
  if (Option.isSome(mailer(settings))) return []
  const noMailer = `no mailer is set (${PREFIX}SMTP_URL or ${PREFIX}MAILER=console)`
  return [
    ...sendEvents
      .filter((name) => deployment.events?.[name] === undefined)
      .map((name) => `${name} has no handler and ${noMailer}: its tokens are generated and dropped`),
    ...(settings.accounts.emailSignInEnabled && deployment.events?.send_sign_in_email === undefined
      ? [`send_sign_in_email has no handler and ${noMailer}: nobody can sign in by mail`]
      : []),
    ...(settings.accounts.securityNotices && deployment.events?.send_security_notice === undefined
      ? [
          `send_security_notice has no handler and ${noMailer}: owners are not told when a way to sign in to their account is added or removed`
        ]
      : [])
  ]
}

/** OAuth states are burned through the blacklist: without it, a state can be replayed. */
const oauthWarnings = (settings: Settings, deployment: Deployment): ReadonlyArray<string> =>
  !settings.tokens.blacklistEnabled && oauthProviders(settings, deployment).length > 0
    ? [
        `${PREFIX}BLACKLIST_ENABLED=false: OAuth states are not burned at the callback, so whoever holds a state and its binding can replay it within ${PREFIX}OAUTH_STATE_EXPIRE_SECONDS`
      ]
    : []

/** Metrics tell anyone who reads them how the service is used and attacked. */
const metricsWarnings = ({ observability, server }: Settings): ReadonlyArray<string> => {
  if (!observability.metricsEnabled) return []
  return [
    ...(Option.isNone(observability.metricsPort)
      ? [
          `${PREFIX}METRICS_ENABLED=true without ${PREFIX}METRICS_PORT: /metrics is served on the API's port to anyone who asks; set ${PREFIX}METRICS_PORT to serve it on a port only the scraper reaches`
        ]
      : []),
    ...(server.workers > 1
      ? [
          `${PREFIX}WORKERS=${server.workers}: each worker keeps its own metrics, and a scrape reaches whichever worker takes the connection`
        ]
      : [])
  ]
}

/** Apps that verify tokens locally need the public keys; a deployment's own route groups may leave them out. */
const jwksWarnings = (settings: Settings, deployment: Deployment): ReadonlyArray<string> =>
  isAsymmetric(settings.tokens.jwtAlgorithm) &&
  deployment.routeGroups !== undefined &&
  !deployment.routeGroups.includes("jwks")
    ? [
        `${PREFIX}JWT_ALGORITHM=${settings.tokens.jwtAlgorithm} but the deployment's routeGroups leave out jwks: the public keys are not published`
      ]
    : []

/** What start-up should warn about: settings this deployment runs with that weaken or drop something. */
export const startupWarnings = (settings: Settings, deployment: Deployment): ReadonlyArray<string> => [
  ...deliveryWarnings(settings, deployment),
  ...oauthWarnings(settings, deployment),
  ...metricsWarnings(settings),
  ...jwksWarnings(settings, deployment)
]

/**
 * REDIS_URL answers, or serve stops with RedisUnreachableError: a typo must not start a service
 * whose processes each count rate limits and lockout on their own. Tried before anything is
 * served, by the primary of several workers too, since a worker that cannot start is replaced
 * for ever. Once started, a Redis gone is what the adapters fall back from.
 */
export const redisTrial = (settings: Settings) =>
  Option.match(settings.storage.redisUrl, {
    onNone: () => Effect.void,
    onSome: (url) =>
      Effect.flatMap(
        Effect.promise(() => import("../infrastructure/redis/RedisClient.js")),
        (client) => client.reachable({ url })
      )
  })
