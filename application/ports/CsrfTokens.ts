import { Context, type Effect } from "effect"

/** What a request in cookie mode submits to prove it was made by the page that holds the session. */
export interface CsrfSubmission {
  /** The X-CSRF-Token header, as sent. */
  readonly header: string
  /** The readable CSRF cookie, as sent. */
  readonly cookie: string
  /** The refresh token of the HttpOnly cookie the request relies on. */
  readonly refreshToken: string
}

/**
 * Signed double-submit tokens for cookie mode. A token is bound to one refresh token under a key
 * derived from SECRET_KEY, so that a value planted in the cookie and echoed in the header by
 * someone who cannot read the refresh cookie is refused.
 */
export class CsrfTokens extends Context.Tag("app/CsrfTokens")<
  CsrfTokens,
  {
    /** A fresh token for the session this refresh token belongs to. */
    readonly issue: (refreshToken: string) => Effect.Effect<string>
    /** True when the header equals the cookie and the cookie was issued for this refresh token (constant time). */
    readonly verify: (submission: CsrfSubmission) => boolean
  }
>() {}
