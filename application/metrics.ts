import { Cause, Effect, Exit, Metric, Option } from "effect"
import { StoreUnavailableError } from "./ports/StoreUnavailableError.js"

/**
 * The security signals an operator watches, as Effect metrics (the metrics endpoint renders
 * them; nothing reads them when metrics are off). They tick only on sign-ins, lockouts, reuse
 * and store faults, never on the hot authenticated routes. Labels are code-defined names, never
 * a login, an address or a token.
 */
export const signIns = Metric.counter("portcullis_sign_ins", {
  description: "Successful sign-ins, by method (password, passkey, oauth).",
  incremental: true
})

export const signInFailures = Metric.counter("portcullis_sign_in_failures", {
  description: "Refused sign-ins, by method and reason (the error kind: AuthenticationError, AccountLockedError, ...).",
  incremental: true
})

export const lockouts = Metric.counter("portcullis_lockouts", {
  description: "Login identifiers locked after MAX_LOGIN_ATTEMPTS failed password checks.",
  incremental: true
})

export const refreshReuseDetections = Metric.counter("portcullis_refresh_reuse_detections", {
  description: "Rotated refresh tokens presented again: each ended its session (family).",
  incremental: true
})

export const storeErrors = Metric.counter("portcullis_store_errors", {
  description: "Store calls that failed or timed out (StoreUnavailableError), by store.",
  incremental: true
})

export const oidcAuthorizations = Metric.counter("portcullis_oidc_authorizations", {
  description:
    "Authorization requests to the OpenID Provider, by outcome: redirect (a code or an error back to the app), sign_in, consent, error_page.",
  incremental: true
})

export const oidcTokenGrants = Metric.counter("portcullis_oidc_token_grants", {
  description: "Tokens the OpenID Provider issued at its token endpoint, by grant type.",
  incremental: true
})

export const oidcRefusals = Metric.counter("portcullis_oidc_refusals", {
  description: "Token requests the OpenID Provider refused, by OAuth error (invalid_grant, invalid_client, ...).",
  incremental: true
})

export const protectionsLocal = Metric.gauge("portcullis_protections_local", {
  description:
    "1 while the Redis of REDIS_URL is unusable, so that rate limits and lockout count in each process on its own; 0 otherwise."
})

export type SignInMethod = "password" | "passkey" | "oauth" | "email"

/**
 * Counts a sign-in's outcome: a success, or a refusal by its error kind. A defect or an
 * interruption is no answer to the client's credentials, so it counts as neither.
 */
export const countedSignIn =
  (method: SignInMethod) =>
  <A, E extends { readonly _tag: string }, R>(signIn: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
    Effect.onExit(signIn, (exit) => {
      if (Exit.isSuccess(exit)) return Metric.increment(Metric.tagged(signIns, "method", method))
      return Option.match(Cause.failureOption(exit.cause), {
        onNone: () => Effect.void,
        onSome: (error) =>
          Metric.increment(Metric.tagged(Metric.tagged(signInFailures, "method", method), "reason", error._tag))
      })
    })

/** Fails as an unavailable `store`, counted. */
export const storeUnavailable = (store: string) =>
  Effect.zipRight(
    Metric.increment(Metric.tagged(storeErrors, "store", store)),
    Effect.fail(new StoreUnavailableError({ store }))
  )

export const webhookTries = Metric.counter("portcullis_webhook_tries", {
  description: "Tries of webhook messages, by outcome: delivered, failed (tried again later) or dead (the last).",
  incremental: true
})

export const webhookBacklog = Metric.gauge("portcullis_webhook_backlog", {
  description: "Webhook messages neither delivered nor dead, as this process last read the outbox."
})

export const webhookBacklogAge = Metric.gauge("portcullis_webhook_backlog_age_seconds", {
  description: "How long the oldest undelivered webhook message has waited, in seconds (0 when none waits)."
})

export const webhookDead = Metric.gauge("portcullis_webhook_dead", {
  description: "Webhook messages dead after their last try, not yet swept or sent again."
})
