import { Effect } from "effect"
import { CsrfError } from "./errors.js"
import { respond } from "./middleware.js"
import { problemOf } from "./problems.js"
import type { Step } from "./step.js"

/** The methods that change nothing (RFC 9110 safe methods): any page may send them. */
const safeMethods: ReadonlySet<string> = new Set(["GET", "HEAD", "OPTIONS", "TRACE"])

// The detail names the rule, never the Origin sent.
const foreignOrigin = problemOf(
  new CsrfError({
    message: "Requests that change something are accepted only from the service's own origin and CORS_ORIGINS."
  })
)

export interface OriginOptions {
  readonly tokenTransport: "bearer" | "cookie"
  /** The origin of the service's own pages (the hosted pages, the demo). */
  readonly publicUrl: URL
  /** CORS_ORIGINS: the origins already serialized as browsers send them (config/forms.ts, `origin`). */
  readonly corsOrigins: ReadonlyArray<string>
}

/**
 * Cookie mode's Origin check (login CSRF defence). There the browser attaches the session cookie
 * by itself, and a sign-in from a foreign page would plant the attacker's session in the
 * victim's browser; SameSite=Lax does not stop a cross-site POST from a sibling subdomain, and
 * the CSRF header guards only the requests that rely on the refresh cookie. So an unsafe request
 * whose `Origin` is present and is neither PUBLIC_URL's origin nor one of CORS_ORIGINS (`null`,
 * which sandboxed frames and some redirects send, included) is refused with 403 CsrfError, on
 * every route. A request without Origin is no browser's cross-site request (browsers send it on
 * every unsafe one), so non-browser clients are not affected. In bearer mode it guards only the
 * OpenID Provider's session and consent routes (their cookie is the browser's): a browser attaches
 * no bearer token by itself. The provider's token, revoke and introspect routes are never checked:
 * they rely on no cookie, and any page may call them (CORS `*`).
 *
 * It runs before anything else the request meets but the response headers and the access log:
 * a refused request reads no body, waits for no hashing slot, touches no store and is not counted
 * by the rate limits, so a foreign page cannot spend its visitors' budgets (nor lock them out of
 * signing in) by sending requests in their name.
 */
export const originCheck = (options: OriginOptions): Step => {
  const allowed: ReadonlySet<string> = new Set([options.publicUrl.origin, ...options.corsOrigins])
  const everyRoute = options.tokenTransport === "cookie"
  return (next) => (routed) => {
    const { method, headers } = routed.request
    const origin = headers.origin
    // The provider's session and consent routes rely on its cookie in every transport; the routes
    // any page may call (token, revoke, introspect) rely on no cookie.
    const kind = routed.route.kind
    const checked = kind === "browser-bound" || (everyRoute && kind !== "oauth-open")
    if (!checked || origin === undefined || safeMethods.has(method) || allowed.has(origin)) return next(routed)
    return Effect.succeed(respond(foreignOrigin))
  }
}
