import * as HttpApp from "@effect/platform/HttpApp"
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import { Effect } from "effect"
import type { Next, Routed, Step } from "./step.js"

/** The request headers a browser page may send: bearer tokens, JSON bodies and the CSRF echo. */
export const CORS_ALLOWED_HEADERS = ["Authorization", "Content-Type", "X-CSRF-Token"] as const

/** Response headers a page on an allowed origin may read beyond the CORS-safelisted ones. */
const EXPOSED_HEADERS = [
  "Allow",
  "Link",
  "Retry-After",
  "WWW-Authenticate",
  "X-Request-Id",
  "X-CSRF-Token",
  "RateLimit-Limit",
  "RateLimit-Remaining",
  "RateLimit-Reset"
]

/** How long a browser may keep a preflight answer, in seconds. */
const PREFLIGHT_MAX_AGE = 600

/** Headers a browser may list in a preflight that need no permission (the CORS-safelisted ones). */
const SAFELISTED = new Set(["accept", "accept-language", "content-language"])
const PERMITTED = new Set([...SAFELISTED, ...CORS_ALLOWED_HEADERS.map((name) => name.toLowerCase())])

/** A header's value as logged: as sent, but bounded, since anyone can send any. */
const shown = (text: string) => (text.length > 200 ? `${text.slice(0, 200)}…` : text)

/**
 * Why a browser will not send the request a preflight asks about, as the log says it: the answer
 * alone (a 405, or a 204 whose lists leave the method or a header out) does not tell an operator.
 */
const refusal = (
  reason: "origin not allowed" | "method not allowed" | "header not allowed",
  fields: Readonly<Record<string, string>>
) => Effect.logInfo("CORS preflight refused", { reason, ...fields })

const requestedHeaders = (value: string | undefined) =>
  (value ?? "")
    .split(",")
    .map((name) => name.trim().toLowerCase())
    .filter((name) => name !== "")

/**
 * CORS for CORS_ORIGINS only. An allowed origin gets its own origin back with credentials
 * allowed, and its preflights are answered 204 for any route that exists, before routing (so
 * they never become 405s). Any other origin gets no CORS header at all and meets the service
 * exactly as it would without CORS. With no origins configured this step only logs preflights.
 *
 * HttpMiddleware.cors does not fit: with one configured origin it sends that origin to every
 * caller, with none it sends `*`, it allows credentials whatever the origin, and it answers
 * every OPTIONS request, on any path, with 204.
 *
 * A preflight that will be refused is logged with its reason; with no origins configured, that
 * is the only thing this step does.
 */
export const cors = (origins: ReadonlyArray<string>): Step => {
  if (origins.length === 0)
    return (next) => (routed) =>
      isPreflight(routed.request) ? Effect.zipRight(refusedOrigin(routed.request), next(routed)) : next(routed)
  const allowed = new Set(origins)
  const granted = (origin: string) => ({
    "access-control-allow-origin": origin,
    "access-control-allow-credentials": "true"
  })
  return (next) => (routed) => {
    const { request, route } = routed
    // The provider's routes any page may call answer CORS `*` without credentials (oauthAnswers.ts).
    if (route.kind === "oauth-open") return next(routed)
    const origin = request.headers.origin
    const isAllowed = origin !== undefined && allowed.has(origin)
    if (!isAllowed) {
      const answered = answer(next, routed, { vary: "Origin" })
      return isPreflight(request) ? Effect.zipRight(refusedOrigin(request), answered) : answered
    }
    const requested = request.headers["access-control-request-method"]
    if (isPreflight(request) && requested !== undefined) {
      const methods = route.allowed
      if (methods.length > 0) {
        const path = route.id
        const headers = requestedHeaders(request.headers["access-control-request-headers"])
        const unpermitted = headers.filter((name) => !PERMITTED.has(name))
        const logged = !methods.includes(requested.toUpperCase())
          ? refusal("method not allowed", {
              origin,
              method: shown(requested),
              route: path,
              allowed: methods.join(", ")
            })
          : unpermitted.length > 0
            ? refusal("header not allowed", { origin, headers: shown(unpermitted.join(", ")), route: path })
            : Effect.void
        return Effect.as(
          logged,
          HttpServerResponse.empty({
            status: 204,
            headers: {
              ...granted(origin),
              "access-control-allow-methods": methods.join(", "),
              "access-control-allow-headers": CORS_ALLOWED_HEADERS.join(", "),
              "access-control-max-age": String(PREFLIGHT_MAX_AGE),
              vary: "Origin"
            }
          })
        )
      }
    }
    return answer(next, routed, {
      ...granted(origin),
      "access-control-expose-headers": EXPOSED_HEADERS.join(", "),
      vary: "Origin"
    })
  }
}

/** A browser's preflight: an OPTIONS with an Origin that asks for a method. */
const isPreflight = (request: Routed["request"]) =>
  request.method === "OPTIONS" &&
  request.headers.origin !== undefined &&
  request.headers["access-control-request-method"] !== undefined

/** A preflight from an origin not in CORS_ORIGINS, logged: it goes on to the route (a 405) as without CORS. */
const refusedOrigin = (request: Routed["request"]) =>
  refusal("origin not allowed", {
    origin: shown(request.headers.origin ?? ""),
    method: shown(request.headers["access-control-request-method"] ?? "")
  })

/**
 * The next step's answer with `headers`. Answers differ by Origin, so caches must key on it,
 * whether this one was allowed or not. Set as the response is sent, so that a failure rendered
 * by an outer step carries them too.
 */
const answer = (next: Next, routed: Routed, headers: Readonly<Record<string, string>>) =>
  Effect.zipRight(
    HttpApp.appendPreResponseHandler((_request, response) =>
      Effect.succeed(HttpServerResponse.setHeaders(response, headers))
    ),
    next(routed)
  )
