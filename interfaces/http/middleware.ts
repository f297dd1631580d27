import { randomUUID } from "node:crypto"
import * as Headers from "@effect/platform/Headers"
import * as HttpApiError from "@effect/platform/HttpApiError"
import * as HttpServerError from "@effect/platform/HttpServerError"
import type * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import { Cause, Effect, Exit, HashMap, LogLevel, Option } from "effect"
import { writeAccessLine } from "./accessLog.js"
import { resolveClientAddress, type TrustedProxies } from "./clientAddress.js"
import type { RequestObserver } from "./metrics.js"
import { isErrorKind, type Problem, problem, problemContentType, problemOf } from "./problems.js"
import {
  type JsonShapeFault,
  jsonShapeFault,
  MAX_JSON_DEPTH,
  pathHasControlCharacter,
  withoutActualValue
} from "./requestShape.js"
import type { ResolvedRoute } from "./routes.js"
import type { Step } from "./step.js"

/** Larger bodies are refused with 413 before they are read; a body must state its length. */
export const MAX_BODY_BYTES = 64 * 1024

export const respond = (answer: Problem) =>
  HttpServerResponse.unsafeJson(answer.body, {
    status: answer.status,
    headers: answer.headers,
    contentType: problemContentType
  })

const unsupportedMediaType = problem(
  415,
  "UnsupportedMediaTypeError",
  "Unsupported media type",
  "Send the request body as JSON with Content-Type: application/json."
)
const lengthRequired = problem(
  411,
  "LengthRequiredError",
  "Length required",
  "Send the request body with a Content-Length header; streamed bodies are not accepted."
)
const payloadTooLarge = problem(413, "PayloadTooLargeError", "Payload too large", "The request body exceeds 64 KiB.")
const malformedJson = problem(422, "ValidationError", "Invalid request", "The request body is not valid JSON.", {
  errors: [{ path: "", message: "is not valid JSON" }]
})

const validationProblem = (error: HttpApiError.HttpApiDecodeError) =>
  problem(422, "ValidationError", "Invalid request", "The request does not match the expected schema.", {
    errors: error.issues.map((issue) => ({
      path: issue.path.map(String).join("."),
      message: withoutActualValue(issue.message)
    }))
  })

const jsonShapeProblems: Record<JsonShapeFault, Problem> = {
  "too deep": problem(
    422,
    "ValidationError",
    "Invalid request",
    `The request body is nested deeper than ${MAX_JSON_DEPTH} levels.`,
    { errors: [{ path: "", message: `is nested deeper than ${MAX_JSON_DEPTH} levels` }] }
  ),
  "NUL character": problem(422, "ValidationError", "Invalid request", "The request body holds a NUL character.", {
    errors: [{ path: "", message: "holds a NUL character" }]
  })
}

const controlCharacterInPath = problem(
  422,
  "ValidationError",
  "Invalid request",
  "The request path holds a control character.",
  { errors: [{ path: "path", message: "must not contain control characters" }] }
)

const hasBody = (request: HttpServerRequest.HttpServerRequest) => Number(request.headers["content-length"] ?? 0) > 0

/**
 * A body must say it is JSON (`application/json`, `…+json`): without a Content-Type it is not
 * read at all, so that no cross-site "simple" request (which cannot set one) reaches a route.
 */
const isJson = (contentType: string | undefined) =>
  contentType !== undefined && /^application\/([\w.-]+\+)?json\s*(;|$)/i.test(contentType.trim())

/**
 * The request as the API decodes it: a body is read as JSON whichever JSON type it names
 * (`…+json` included), and a request without a body names none, so that no other reader (a
 * multipart one, waiting for parts that never come) is ever chosen by the client.
 */
const asJson = (request: HttpServerRequest.HttpServerRequest) => {
  const contentType = request.headers["content-type"]
  if (contentType === undefined) return request
  if (!hasBody(request)) return request.modify({ headers: Headers.remove(request.headers, "content-type") })
  return /^application\/json\s*(;|$)/i.test(contentType.trim())
    ? request
    : request.modify({ headers: Headers.set(request.headers, "content-type", "application/json") })
}

const isBodyDecodeFailure = (defect: unknown): defect is HttpServerError.RequestError =>
  defect instanceof HttpServerError.RequestError && defect.reason === "Decode"

const unexpected = (cause: Cause.Cause<unknown>) =>
  Effect.gen(function* () {
    const requestId = Option.getOrElse(HashMap.get(yield* Effect.logAnnotations, "request_id"), () => "unknown")
    yield* Effect.logError("unexpected failure", cause)
    return problem(500, "InternalError", "Internal error", `An unexpected error occurred (request id ${requestId}).`)
  })

const noRoute = problem(404, "NotFoundError", "Not found", "No route matches this path.")

/** The answer to a path no route serves. */
export const noRouteResponse = respond(noRoute)

/** 404, or 405 with the methods the path accepts, as the router resolved the request's route. */
const notFound = (route: ResolvedRoute) => {
  const allowed = route.allowed
  return allowed.length === 0
    ? noRoute
    : problem(405, "MethodNotAllowedError", "Method not allowed", `This route accepts ${allowed.join(", ")}.`, {
        headers: { allow: allowed.join(", ") }
      })
}

/**
 * The API's last word on failures: every error kind, decoding failure, unreadable or oversized
 * body, unknown route and defect becomes a problem+json response. Nothing reaches the client as
 * a bare 500; defects are logged with the request id the client sees.
 */
export const problemResponses: Step = (next) => {
  const answer = (route: ResolvedRoute) => (cause: Cause.Cause<never>) => {
    if (Cause.isInterruptedOnly(cause)) return Effect.failCause(cause)
    const failure = Cause.failureOption(cause)
    if (Option.isSome(failure)) {
      const error: unknown = failure.value
      if (isErrorKind(error)) return Effect.succeed(respond(problemOf(error)))
      if (error instanceof HttpApiError.HttpApiDecodeError) return Effect.succeed(respond(validationProblem(error)))
      if (error instanceof HttpServerError.RouteNotFound) return Effect.succeed(respond(notFound(route)))
    }
    // A body that could not be read as text (the client broke off mid-body) is no JSON; an
    // oversized one never gets here, refused by its Content-Length before a byte is read.
    const defect = Cause.dieOption(cause)
    if (Option.isSome(defect) && isBodyDecodeFailure(defect.value)) return Effect.succeed(respond(malformedJson))
    return Effect.map(unexpected(cause), respond)
  }
  return (routed) => {
    const { request, route } = routed
    // A streamed body could only be stopped by dropping the connection, so bodies must say
    // their length, and an oversized one is refused before a byte of it is read.
    if (request.headers["transfer-encoding"] !== undefined) return Effect.succeed(respond(lengthRequired))
    if (Number(request.headers["content-length"] ?? 0) > MAX_BODY_BYTES) return Effect.succeed(respond(payloadTooLarge))
    // The provider's protocol routes take forms (OAuth 2.1 §3.2) and read their bodies themselves.
    if (route.kind === "oauth" || route.kind === "oauth-open") {
      return Effect.catchAllCause(next(routed), answer(route))
    }
    if (hasBody(request) && !isJson(request.headers["content-type"])) {
      return Effect.succeed(respond(unsupportedMediaType))
    }
    if (pathHasControlCharacter(route.target)) return Effect.succeed(respond(controlCharacterInPath))
    const json = asJson(request)
    const onward = json === request ? routed : { ...routed, request: json }
    // A request without a body (most: GET /me) needs none of the body's checks. The body read is
    // bounded by its Content-Length, checked above: the parser delivers that many bytes and no
    // more, so no limit of the platform's (another fiber-local change) is set around it.
    const checked = hasBody(json)
      ? Effect.flatMap(Effect.orDie(json.text), (text) => {
          // Read once here (the platform's request keeps it for the route's decoding), so that its
          // shape is judged before anything parses or decodes it.
          const fault = jsonShapeFault(text)
          return fault === undefined ? next(onward) : Effect.succeed(respond(jsonShapeProblems[fault]))
        })
      : next(onward)
    return Effect.catchAllCause(checked, answer(route))
  }
}

export interface HeaderOptions {
  /** Send Strict-Transport-Security: the service is reached over https (PUBLIC_URL). */
  readonly hsts: boolean
  /**
   * The Content-Security-Policy of the routes that are pages, by route (the docs page, whose
   * scripts and styles are inline; the demo and the hosted pages, whose files come from the
   * service itself); the API's everywhere else.
   */
  readonly policies: ReadonlyMap<string, string>
  /** Who may say who the client is, for the access log's client address. */
  readonly proxies: TrustedProxies
  /** Told of every request once answered (METRICS_ENABLED); without one, requests pay nothing for metrics. */
  readonly observe?: RequestObserver | undefined
}

/** Load balancers call these every few seconds: their lines are debug, not info. */
const probeRoutes = new Set(["/healthz", "/readyz"])

const apiPolicy = "default-src 'none'; frame-ancestors 'none'"

/** The docs page's policy: its scripts and styles are inline. */
export const docsPolicy =
  "default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; img-src 'self' data:; connect-src 'self'; frame-ancestors 'none'"

/** Nothing is stored by caches, but what a route declared cacheable itself (the documents, the public keys). */
const withCaching = (response: HttpServerResponse.HttpServerResponse, headers: Record<string, string>) => {
  const own = response.headers["cache-control"]
  return own === undefined ? headers : { ...headers, "cache-control": own }
}

/**
 * Security headers on every response, a request id the logs and the client share, and one
 * access-log line per request: method, route as declared (`unmatched` for a path no route serves),
 * path without its query string (a mailed token may ride there), status, duration, client address
 * and user agent; never a header's or a body's secret.
 * The same point times the request for the metrics, when they are on.
 *
 * The client address is resolved here, once (trusted proxy headers, else the socket), and
 * becomes the request's `remoteAddress` for every step after and the route: the rate limits'
 * buckets, the IP a session records.
 *
 * The pipeline's first step: every response the service makes, problems, preflights, the docs
 * and the demo included, comes back through it before it is sent, so the headers are set on the
 * response itself rather than through a pre-response handler (a fiber-local change on every
 * request).
 */
export const responseHeaders = (options: HeaderOptions): Step => {
  const common: Record<string, string> = {
    "x-content-type-options": "nosniff",
    "x-frame-options": "DENY",
    "referrer-policy": "no-referrer",
    "cache-control": "no-store",
    ...(options.hsts ? { "strict-transport-security": "max-age=63072000; includeSubDomains" } : {})
  }
  const { observe, policies } = options
  return (next) => (routed) => {
    const { request, route } = routed
    const requestId = randomUUID()
    const started = performance.now()
    const policy = policies.get(route.id) ?? apiPolicy
    const headers = { ...common, "content-security-policy": policy, "x-request-id": requestId }
    const socket = Option.getOrUndefined(request.remoteAddress)
    const address = resolveClientAddress(request.headers, socket, options.proxies)
    const served =
      address === undefined || address === socket
        ? next(routed)
        : next({ ...routed, request: request.modify({ remoteAddress: address }) })
    return Effect.exit(served).pipe(
      Effect.flatMap((exit) => {
        const status = Exit.isSuccess(exit)
          ? exit.value.status
          : HttpServerError.causeResponseStripped(exit.cause)[0].status
        const elapsed = performance.now() - started
        observe?.(request.method, route.id, status, elapsed)
        const line = writeAccessLine(probeRoutes.has(route.id) ? LogLevel.Debug : LogLevel.Info, {
          method: request.method,
          route: route.id,
          path: route.target,
          status,
          duration_ms: Math.round(elapsed),
          client_address: address ?? "unknown",
          user_agent: request.headers["user-agent"]?.slice(0, 256) ?? "",
          request_id: requestId
        })
        return Effect.zipRight(
          line,
          Exit.isSuccess(exit)
            ? Effect.succeed(HttpServerResponse.setHeaders(exit.value, withCaching(exit.value, headers)))
            : exit
        )
      }),
      // Every line the request logs, its access-log line included, names it.
      Effect.annotateLogs("request_id", requestId)
    )
  }
}
