import { Schema } from "effect"

/**
 * The error kinds of the HTTP interface itself, beside the domain's: refusals made before or
 * around a use case. Pure schemas, so the API definition (and a client) can name them.
 */

/**
 * A request relied on the refresh cookie without proving it comes from the page that holds the
 * session: no X-CSRF-Token header, or one that does not match a valid CSRF cookie.
 */
export class CsrfError extends Schema.TaggedError<CsrfError>()("CsrfError", { message: Schema.String }) {}

/**
 * Too many requests are waiting to hash a password (HASHING_QUEUE_LIMIT): a sign-in or
 * registration refused at once, to be retried shortly.
 */
export class HashingQueueFullError extends Schema.TaggedError<HashingQueueFullError>()("HashingQueueFullError", {}) {}
