import type { FieldProblem, FullAuthError, RateLimitedError, StoreUnavailableError } from "../../domain/errors.js"
import type { CsrfError, HashingQueueFullError } from "./errors.js"

/** Every error kind a request can fail with: the use cases' and the HTTP interface's own. */
export type ErrorKind = FullAuthError | StoreUnavailableError | CsrfError | RateLimitedError | HashingQueueFullError
export type Tag = ErrorKind["_tag"]

/** The problems answered about the request itself, before any route runs: no use case's error kind. */
export const requestProblems = {
  LengthRequiredError: { status: 411, title: "Length required" },
  PayloadTooLargeError: { status: 413, title: "Payload too large" },
  UnsupportedMediaTypeError: { status: 415, title: "Unsupported media type" },
  NotFoundError: { status: 404, title: "Not found" },
  MethodNotAllowedError: { status: 405, title: "Method not allowed" },
  ValidationError: { status: 422, title: "Invalid request" },
  InternalError: { status: 500, title: "Internal error" }
} as const

/** What a problem's `code` may say: an error kind's tag, or the kind it is reported as. */
export type ProblemCode = Tag | keyof typeof requestProblems | "ServiceUnavailableError"

/** The extension members (RFC 9457) a problem may carry beside the standard ones. */
interface Extensions {
  readonly errors?: ReadonlyArray<FieldProblem>
  /** Seconds to wait, as in Retry-After, for a client that cannot read headers. */
  readonly retry_after?: number
  readonly limit?: number
  readonly store?: string
  /** ReauthenticationRequiredError: how recent (seconds) a sign-in must be, as in the challenge's max_age. */
  readonly max_age?: number
}

/** An RFC 9457 problem body. `code` names the error kind a client can branch on. */
export interface ProblemBody extends Extensions {
  readonly type: string
  readonly title: string
  readonly status: number
  readonly detail: string
  readonly code: ProblemCode
}

/** A problem ready to send: status, body and the headers that belong with it. */
export interface Problem {
  readonly status: number
  readonly body: ProblemBody
  readonly headers: Readonly<Record<string, string>>
}

export const problem = (
  status: number,
  code: ProblemCode,
  title: string,
  detail: string,
  extra: Extensions & { readonly headers?: Record<string, string> } = {}
): Problem => {
  const { headers = {}, ...extensions } = extra
  return {
    status,
    body: { type: `urn:portcullis:problem:${code}`, title, status, detail, code, ...extensions },
    headers
  }
}

export interface KindRule<E> {
  readonly status: number
  readonly title: string
  /** The kind reported in `code`, when it is not the error's own tag. */
  readonly code?: ProblemCode
  readonly detail: (error: E) => string
  readonly extensions?: (error: E) => Extensions
  readonly headers?: (error: E) => Record<string, string>
  /**
   * The error's fields read back from its body (a client's decoding); undefined when the body,
   * though of this kind's code, is another kind's. No fields by default.
   */
  readonly fields?: (body: ProblemBody) => object | undefined
}

/** The RateLimit-* fields (draft-ietf-httpapi-ratelimit-headers), sent on refusals and on allowed requests alike. */
export const rateLimitHeaders = (limit: number, remaining: number, resetSeconds: number): Record<string, string> => ({
  "ratelimit-limit": String(limit),
  "ratelimit-remaining": String(remaining),
  "ratelimit-reset": String(resetSeconds)
})

const invalidToken = { "www-authenticate": 'Bearer error="invalid_token"' }
const fromDetail = (body: ProblemBody) => ({ message: body.detail })
const STORE_RETRY_SECONDS = 5
const HASHING_RETRY_SECONDS = 1

/**
 * The one table from error kinds to HTTP: status, title, detail, extension members and headers.
 * Nothing else in the code base decides a status for a domain error.
 */
const rules: { readonly [K in Tag]: KindRule<Extract<ErrorKind, { readonly _tag: K }>> } = {
  AuthenticationError: {
    status: 401,
    title: "Authentication failed",
    detail: () => "Invalid credentials.",
    headers: () => ({ "www-authenticate": "Bearer" })
  },
  ReauthenticationError: {
    status: 400,
    title: "Current password required",
    code: "AuthenticationError",
    detail: () => "The current password is missing or wrong."
  },
  ReauthenticationRequiredError: {
    status: 401,
    title: "Recent sign-in required",
    detail: (e) =>
      `Adding a way to sign in needs a sign-in within the last ${e.maxAgeSeconds} seconds; sign in again, then retry.`,
    extensions: (e) => ({ max_age: e.maxAgeSeconds }),
    // RFC 9470: the step-up challenge a client can act on.
    headers: (e) => ({
      "www-authenticate": `Bearer error="insufficient_user_authentication", error_description="A more recent sign-in is required", max_age=${e.maxAgeSeconds}`
    }),
    fields: (body) => (typeof body.max_age === "number" ? { maxAgeSeconds: body.max_age } : undefined)
  },
  CredentialsChangedError: {
    status: 409,
    title: "Ways in changed",
    detail: () => "The account's ways to sign in changed while this request ran; try again."
  },
  AuthorizationError: { status: 403, title: "Forbidden", detail: (e) => e.message, fields: fromDetail },
  TokenError: {
    status: 401,
    title: "Invalid token",
    detail: (e) => e.message,
    headers: () => invalidToken,
    fields: fromDetail
  },
  TokenExpiredError: {
    status: 401,
    title: "Token expired",
    detail: () => "The token has expired.",
    headers: () => invalidToken
  },
  TokenBlacklistedError: {
    status: 401,
    title: "Token revoked",
    detail: (e) => e.message,
    headers: () => invalidToken,
    fields: fromDetail
  },
  AuthorizationRequestGoneError: {
    status: 410,
    title: "Authorization request gone",
    detail: () => "The authorization request is unknown, expired or answered; start again from the app."
  },
  SignInCodeError: {
    status: 400,
    title: "Sign-in code refused",
    detail: () =>
      "The code is wrong, or no code is pending for this address (used, voided after five wrong codes, or expired)."
  },
  UserAlreadyExistsError: {
    status: 409,
    title: "User already exists",
    detail: () => "A user with this email already exists."
  },
  UserNotFoundError: { status: 404, title: "User not found", detail: () => "No such user." },
  SessionNotFoundError: {
    status: 404,
    title: "Session not found",
    code: "NotFoundError",
    detail: () => "You have no active session with this id."
  },
  InvalidPasswordError: {
    status: 422,
    title: "Password refused",
    detail: (e) => `The password ${e.problems.join("; ")}.`,
    extensions: (e) => ({ errors: e.problems.map((message) => ({ path: "password", message })) }),
    fields: (body) => ({ problems: (body.errors ?? []).map((problem) => problem.message) })
  },
  AccountLockedError: {
    status: 423,
    title: "Account locked",
    detail: () => "Too many failed sign-in attempts; try again later.",
    extensions: (e) => ({ retry_after: e.retryAfterSeconds }),
    headers: (e) => ({ "retry-after": String(e.retryAfterSeconds) }),
    fields: (body) => ({ retryAfterSeconds: body.retry_after })
  },
  ValidationError: {
    status: requestProblems.ValidationError.status,
    title: requestProblems.ValidationError.title,
    detail: (e) => e.message,
    extensions: (e) => ({ errors: e.errors }),
    fields: (body) => ({ message: body.detail, errors: body.errors ?? [] })
  },
  OAuthError: { status: 400, title: "OAuth sign-in refused", detail: (e) => e.message, fields: fromDetail },
  OAuthProviderError: { status: 502, title: "OAuth provider failed", detail: (e) => e.message, fields: fromDetail },
  OAuthAccountAlreadyLinkedError: {
    status: 409,
    title: "Account already linked",
    detail: () => "This provider account is already linked to another user."
  },
  OAuthProviderAlreadyLinkedError: {
    status: 409,
    title: "Provider already linked",
    detail: () => "You already linked a different account of this provider."
  },
  OAuthProviderNotFoundError: {
    status: 404,
    title: "OAuth provider not found",
    code: "NotFoundError",
    detail: () => "No OAuth provider of this name is configured."
  },
  LinkedAccountNotFoundError: {
    status: 404,
    title: "Linked account not found",
    code: "NotFoundError",
    detail: () => "You have no linked account of this provider."
  },
  LastSignInMethodError: {
    status: 400,
    title: "Last way to sign in",
    detail: () => "This is your only way to sign in; set a password or add another sign-in method before removing it."
  },
  PasskeyNotFoundError: {
    status: 404,
    title: "Passkey not found",
    code: "NotFoundError",
    detail: () => "You have no passkey with this id."
  },
  PasskeyRegistrationError: {
    status: 400,
    title: "Passkey registration failed",
    detail: () => "The passkey could not be registered; start the registration again."
  },
  CsrfError: { status: 403, title: "CSRF check failed", detail: (e) => e.message, fields: fromDetail },
  RateLimitedError: {
    status: 429,
    title: "Too many requests",
    detail: (e) => `Too many requests; try again in ${e.resetSeconds} seconds.`,
    extensions: (e) => ({ retry_after: e.resetSeconds, limit: e.limit }),
    headers: (e) => ({ "retry-after": String(e.resetSeconds), ...rateLimitHeaders(e.limit, 0, e.resetSeconds) }),
    fields: (body) => ({ limit: body.limit, resetSeconds: body.retry_after })
  },
  StoreUnavailableError: {
    status: 503,
    title: "Service unavailable",
    code: "ServiceUnavailableError",
    detail: (e) => `A backing store (${e.store}) is unavailable; try again shortly.`,
    extensions: (e) => ({ retry_after: STORE_RETRY_SECONDS, store: e.store }),
    headers: () => ({ "retry-after": String(STORE_RETRY_SECONDS) }),
    fields: (body) => (body.store === undefined ? undefined : { store: body.store })
  },
  HashingQueueFullError: {
    status: 503,
    title: "Service unavailable",
    code: "ServiceUnavailableError",
    detail: () => "Too many password checks are waiting; try again shortly.",
    extensions: () => ({ retry_after: HASHING_RETRY_SECONDS }),
    headers: () => ({ "retry-after": String(HASHING_RETRY_SECONDS) }),
    fields: (body) => (body.store === undefined ? {} : undefined)
  }
}

export const ruleOf = (tag: Tag) => rules[tag] as KindRule<ErrorKind>
export const codeOf = (tag: Tag) => ruleOf(tag).code ?? tag

/** Every code the service can send in a problem: its error kinds' and its request problems'. */
export const problemCodes: ReadonlyArray<ProblemCode> = [
  ...new Set<ProblemCode>([
    ...(Object.keys(rules) as Array<Tag>).map(codeOf),
    ...Object.keys(requestProblems)
  ] as Array<ProblemCode>)
]

/** A code's title: the kind's of that name, or the request problem's, or the first kind's reported under it. */
export const titleOf = (code: ProblemCode): string =>
  (rules as Record<string, KindRule<ErrorKind> | undefined>)[code]?.title ??
  (requestProblems as Record<string, { readonly title: string } | undefined>)[code]?.title ??
  ruleOf((Object.keys(rules) as Array<Tag>).find((tag) => codeOf(tag) === code) ?? "StoreUnavailableError").title

/** The statuses each code is answered with. */
export const statusesOf = (code: ProblemCode): ReadonlyArray<number> => {
  const statuses = (Object.keys(rules) as Array<Tag>)
    .filter((tag) => codeOf(tag) === code)
    .map((tag) => rules[tag].status)
  const own = (requestProblems as Record<string, { readonly status: number } | undefined>)[code]
  return [...new Set(own === undefined ? statuses : [...statuses, own.status])]
}

export const isErrorKind = (value: unknown): value is ErrorKind =>
  typeof value === "object" && value !== null && "_tag" in value && Object.hasOwn(rules, value._tag as string)

export const problemOf = (error: ErrorKind): Problem => {
  const rule = ruleOf(error._tag)
  return problem(rule.status, codeOf(error._tag), rule.title, rule.detail(error), {
    ...rule.extensions?.(error),
    ...(rule.headers === undefined ? {} : { headers: rule.headers(error) })
  })
}

export const problemContentType = "application/problem+json"
