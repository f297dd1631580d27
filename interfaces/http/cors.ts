import * as HttpApp from "@effect/platform/HttpApp"
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import { Effect } from "effect"
import { pass, type Step } from "./step.js"

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

/**
 * CORS for CORS_ORIGINS only. An allowed origin gets its own origin back with credentials
 * allowed, and its preflights are answered 204 for any route that exists, before routing (so
 * they never become 405s). Any other origin gets no CORS header at all and meets the service
 * exactly as it would without CORS. With no origins configured this step is off.
 *
 * HttpMiddleware.cors does not fit: with one configured origin it sends that origin to every
 * caller, with none it sends `*`, it allows credentials whatever the origin, and it answers
 * every OPTIONS request, on any path, with 204.
 */
export const cors = (origins: ReadonlyArray<string>): Step => {
  if (origins.length === 0) return pass
  const allowed = new Set(origins)
  const granted = (origin: string) => ({
    "access-control-allow-origin": origin,
    "access-control-allow-credentials": "true"
  })
  return (next) => (routed) => {
    const { request, route } = routed
    const origin = request.headers.origin
    const isAllowed = origin !== undefined && allowed.has(origin)
    if (isAllowed && request.method === "OPTIONS" && request.headers["access-control-request-method"] !== undefined) {
      const methods = route.allowed()
      if (methods.length > 0) {
        return Effect.succeed(
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
    // Answers differ by Origin, so caches must key on it, whether this one was allowed or not.
    // Set as the response is sent, so that a failure rendered by an outer step carries them too.
    const headers = isAllowed
      ? { ...granted(origin), "access-control-expose-headers": EXPOSED_HEADERS.join(", "), vary: "Origin" }
      : { vary: "Origin" }
    return Effect.zipRight(
      HttpApp.appendPreResponseHandler((_request, response) =>
        Effect.succeed(HttpServerResponse.setHeaders(response, headers))
      ),
      next(routed)
    )
  }
}
