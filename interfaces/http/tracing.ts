import * as Headers from "@effect/platform/Headers"
import * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import { Effect, Layer, Option } from "effect"
import type { Step } from "./step.js"

/**
 * Headers whose values the request span records as `<redacted>`: the platform's own list
 * (authorization, cookie, set-cookie, x-api-key) and the CSRF token of cookie mode.
 */
const secretHeaders = ["authorization", "proxy-authorization", "cookie", "set-cookie", "x-api-key", "x-csrf-token"]

/** The request span's header attributes with every secret header's value redacted. */
export const redactedSpanHeaders = Layer.locallyScoped(Headers.currentRedactedNames, secretHeaders)

const withoutValues = (search: URLSearchParams) =>
  [...search.keys()].map((name) => `${encodeURIComponent(name)}=REDACTED`).join("&")

/**
 * The request span's URL without the query's values: a mailed token rides there (the hosted
 * pages' `?token=`), and OAuth's code and state. The platform records the URL before any API
 * middleware runs, so this step overwrites its `url.full` and `url.query` from inside the span.
 * Only installed when spans are exported.
 */
export const redactSpanQuery: Step = (next) => (routed) => {
  const { request } = routed
  if (!request.url.includes("?")) return next(routed)
  const redact = Effect.flatMap(Effect.option(Effect.currentSpan), (span) =>
    Effect.sync(() => {
      const url = Option.getOrUndefined(HttpServerRequest.toURL(request))
      if (Option.isNone(span) || url === undefined) return
      const query = withoutValues(url.searchParams)
      url.search = query
      span.value.attribute("url.full", url.href)
      span.value.attribute("url.query", query)
    })
  )
  return Effect.zipRight(redact, next(routed))
}
