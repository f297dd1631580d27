import { Schema } from "effect"

/**
 * A relying party of the OpenID Provider: an app, a tool or an agent that signs users in through
 * Portcullis (docs/behaviour.md, "Portcullis as an OpenID Provider").
 */
export const ClientId = Schema.String.pipe(Schema.nonEmptyString(), Schema.brand("ClientId"))
export type ClientId = typeof ClientId.Type

/** How a client proves itself at the token endpoint: a public client cannot keep a secret. */
export type ClientAuthMethod = "client_secret_basic" | "client_secret_post" | "none"

/** The grants a client may use; `authorization_code` (with refresh) is every client's. */
export type ClientGrant = "authorization_code" | "client_credentials"

/** A client as stored: its secret only as a digest, never the secret. */
export interface Client {
  readonly client_id: ClientId
  readonly name: string
  /** A public client (a native or browser app, an agent) has no secret and authenticates with `none`. */
  readonly public: boolean
  /** A first-party client is never asked for consent: the deployment's own apps. */
  readonly first_party: boolean
  /** A client that registered itself (RFC 7591): its pages say it is unverified. */
  readonly self_registered: boolean
  readonly redirect_uris: ReadonlyArray<string>
  readonly post_logout_redirect_uris: ReadonlyArray<string>
  /** Scopes of its own, beyond the standard ones every client may ask for. */
  readonly scopes: ReadonlyArray<string>
  readonly grants: ReadonlyArray<ClientGrant>
  /** The SHA-256 digest of the secret, hex; none for a public client. */
  readonly secret_digest: string | null
}

/**
 * A loopback redirect URI of a native app (RFC 8252 §7.3): plain http on the IPv4 or IPv6
 * loopback literal, any port, a path and query but no fragment and no userinfo. `localhost` is
 * not one: a name can be made to resolve elsewhere (RFC 8252 §8.3).
 */
const loopback = /^http:\/\/(127\.0\.0\.1|\[::1\])(?::([0-9]{1,5}))?(\/[^#]*)?$/

const loopbackParts = (uri: string) => {
  const match = loopback.exec(uri)
  if (match === null) return undefined
  const [, host = "", port, path] = match
  if (port !== undefined && (Number(port) < 1 || Number(port) > 65535)) return undefined
  return { host, path: path ?? "/" }
}

/**
 * Whether `requested` is one of the client's redirect URIs: equal as strings, character for
 * character (no normalising: a case, an encoding or a trailing part is another URI), except that
 * a registered loopback URI matches the same URI on any port, as a native app listens on the port
 * it is given when it starts.
 */
export const redirectUriMatches = (registered: ReadonlyArray<string>, requested: string): boolean =>
  registered.some((uri) => {
    if (uri === requested) return true
    const mine = loopbackParts(uri)
    const theirs = loopbackParts(requested)
    return mine !== undefined && theirs !== undefined && mine.host === theirs.host && mine.path === theirs.path
  })

/**
 * What a redirect URI registered for a client may be: absolute, without a fragment (RFC 6749
 * §3.1.2); https, a loopback http URI, or a private-use scheme of a native app (`com.example.app:/cb`,
 * RFC 8252 §7.1). Plain http elsewhere is refused: the code would cross the network in the clear.
 * Answers why not, or undefined when it may.
 */
export const redirectUriProblem = (uri: string): string | undefined => {
  let url: URL
  try {
    url = new URL(uri)
  } catch {
    return "is not an absolute URI"
  }
  if (uri.includes("#")) return "must not have a fragment"
  if (url.username !== "" || url.password !== "") return "must not carry a user name or password"
  if (url.protocol === "https:") return url.hostname === "" ? "has no host" : undefined
  if (url.protocol === "http:") {
    return loopbackParts(uri) !== undefined || url.hostname === "localhost"
      ? undefined
      : "must be https, or http on 127.0.0.1 or [::1] (a native app's loopback)"
  }
  // A private-use scheme is a reversed domain name (RFC 8252 §7.1): at least one dot.
  if (/^[a-z][a-z0-9+.-]*\.[a-z0-9+.-]+:$/.test(url.protocol)) return undefined
  return "must be https, loopback http, or a private-use scheme such as com.example.app:/callback"
}
