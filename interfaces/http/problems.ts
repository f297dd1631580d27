import { HttpApiSchema } from "@effect/platform"
import { ParseResult, Schema } from "effect"
import type { StoreUnavailableError } from "../../application/ports/StoreUnavailableError.js"
import {
  FieldProblem,
  type FullAuthError,
  type RateLimitedError,
  TokenBlacklistedError,
  TokenError,
  TokenExpiredError
} from "../../domain/errors.js"
import type { CsrfError } from "./cookies.js"

/** An RFC 9457 problem body. `code` names the error kind a client can branch on. */
export const ProblemBody = Schema.Struct({
  type: Schema.String,
  title: Schema.String,
  status: Schema.Int,
  detail: Schema.String,
  code: Schema.String,
  errors: Schema.optional(Schema.Array(FieldProblem))
}).annotations({ identifier: "Problem" })
export type ProblemBody = typeof ProblemBody.Type

/** A problem ready to send: status, body and the headers that belong with it. */
export interface Problem {
  readonly status: number
  readonly body: ProblemBody
  readonly headers: Readonly<Record<string, string>>
}

export const problem = (
  status: number,
  code: string,
  title: string,
  detail: string,
  extra: { readonly errors?: ReadonlyArray<FieldProblem>; readonly headers?: Record<string, string> } = {}
): Problem => ({
  status,
  body: {
    type: `urn:portcullis:problem:${code}`,
    title,
    status,
    detail,
    code,
    ...(extra.errors === undefined ? {} : { errors: extra.errors })
  },
  headers: extra.headers ?? {}
})

/** Every error kind a request can fail with: the use cases' and the HTTP interface's own. */
export type ErrorKind = FullAuthError | StoreUnavailableError | CsrfError | RateLimitedError
type Tag = ErrorKind["_tag"]

interface KindRule<E> {
  readonly status: number
  readonly title: string
  /** The kind reported in `code`, when it is not the error's own tag. */
  readonly code?: string
  readonly detail: (error: E) => string
  readonly errors?: (error: E) => ReadonlyArray<FieldProblem>
  readonly headers?: (error: E) => Record<string, string>
}

/** The RateLimit-* fields (draft-ietf-httpapi-ratelimit-headers), sent on refusals and on allowed requests alike. */
export const rateLimitHeaders = (limit: number, remaining: number, resetSeconds: number): Record<string, string> => ({
  "ratelimit-limit": String(limit),
  "ratelimit-remaining": String(remaining),
  "ratelimit-reset": String(resetSeconds)
})

const invalidToken = { "www-authenticate": 'Bearer error="invalid_token"' }

/**
 * The one table from error kinds to HTTP: status, title, detail and headers. Nothing else in
 * the code base decides a status for a domain error.
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
  AuthorizationError: { status: 403, title: "Forbidden", detail: (e) => e.message },
  TokenError: { status: 401, title: "Invalid token", detail: (e) => e.message, headers: () => invalidToken },
  TokenExpiredError: {
    status: 401,
    title: "Token expired",
    detail: () => "The token has expired.",
    headers: () => invalidToken
  },
  TokenBlacklistedError: { status: 401, title: "Token revoked", detail: (e) => e.message, headers: () => invalidToken },
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
    errors: (e) => e.problems.map((message) => ({ path: "password", message }))
  },
  AccountLockedError: {
    status: 423,
    title: "Account locked",
    detail: () => "Too many failed sign-in attempts; try again later.",
    headers: (e) => ({ "retry-after": String(e.retryAfterSeconds) })
  },
  ValidationError: { status: 422, title: "Invalid request", detail: (e) => e.message, errors: (e) => e.errors },
  OAuthError: { status: 400, title: "OAuth sign-in refused", detail: (e) => e.message },
  OAuthProviderError: { status: 502, title: "OAuth provider failed", detail: (e) => e.message },
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
  CsrfError: { status: 403, title: "CSRF check failed", detail: (e) => e.message },
  RateLimitedError: {
    status: 429,
    title: "Too many requests",
    detail: (e) => `Too many requests; try again in ${e.resetSeconds} seconds.`,
    headers: (e) => ({ "retry-after": String(e.resetSeconds), ...rateLimitHeaders(e.limit, 0, e.resetSeconds) })
  },
  StoreUnavailableError: {
    status: 503,
    title: "Service unavailable",
    code: "ServiceUnavailableError",
    detail: (e) => `A backing store (${e.store}) is unavailable; try again shortly.`,
    headers: () => ({ "retry-after": "5" })
  }
}

const ruleOf = (error: ErrorKind) => rules[error._tag] as KindRule<ErrorKind>

export const isErrorKind = (value: unknown): value is ErrorKind =>
  typeof value === "object" && value !== null && "_tag" in value && Object.hasOwn(rules, value._tag as string)

export const problemOf = (error: ErrorKind): Problem => {
  const rule = ruleOf(error)
  const errors = rule.errors?.(error)
  return problem(rule.status, rule.code ?? error._tag, rule.title, rule.detail(error), {
    ...(errors === undefined ? {} : { errors }),
    ...(rule.headers === undefined ? {} : { headers: rule.headers(error) })
  })
}

export const problemContentType = "application/problem+json"

/**
 * How an endpoint declares that it can fail with an error kind: the domain error on the type
 * side, its problem body (with the kind's status) on the wire. This is what the OpenAPI
 * document shows; the response itself is rendered from the same table by the error middleware.
 */
export const declared = <A extends ErrorKind, I, R>(schema: Schema.Schema<A, I, R> & { readonly _tag: A["_tag"] }) =>
  Schema.transformOrFail(ProblemBody, Schema.typeSchema(schema), {
    strict: true,
    decode: (body, _, ast) => ParseResult.fail(new ParseResult.Forbidden(ast, body, "problems are only encoded")),
    encode: (error) => ParseResult.succeed(problemOf(error).body)
  }).pipe(HttpApiSchema.withEncoding({ kind: "Json", contentType: problemContentType }), (self) =>
    self.annotations(
      HttpApiSchema.annotations({ status: rules[schema._tag].status, description: rules[schema._tag].title })
    )
  )

/** A token that does not verify, has expired or was revoked: 401 on every route that takes one. */
export const TokenFailure = Schema.Union(
  declared(TokenError),
  declared(TokenExpiredError),
  declared(TokenBlacklistedError)
)
