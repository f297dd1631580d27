import { Data, Schema } from "effect"
import { constantTimeEqual } from "../OAuth.js"

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

export const loopbackParts = (uri: string) => {
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

/** How a client presented itself at the token, revocation or introspection endpoint. */
export interface PresentedClient {
  /** From `Authorization: Basic` (client_secret_basic), both parts form-decoded (RFC 6749 §2.3.1). */
  readonly basic: { readonly client_id: string; readonly client_secret: string } | undefined
  /** From the form body: `client_id`, and `client_secret` for client_secret_post. */
  readonly client_id: string | undefined
  readonly client_secret: string | undefined
}

export type ClientAuthentication = Data.TaggedEnum<{
  /** The client, proven: a confidential one by its secret, a public one by its id alone (`none`). */
  Authenticated: { readonly client: Client; readonly method: ClientAuthMethod }
  /** invalid_client (401): unknown, a wrong secret, a confidential client without one, two methods at once. */
  Refused: { readonly reason: string }
}>
export const ClientAuthentication = Data.taggedEnum<ClientAuthentication>()

/** Which client a request names, by whichever way it used; undefined when it names none or two. */
export const presentedClientId = (presented: PresentedClient): string | undefined => {
  if (presented.basic !== undefined)
    return presented.client_id === undefined || presented.client_id === presented.basic.client_id
      ? presented.basic.client_id
      : undefined
  return presented.client_id
}

/**
 * Whether the request proves the client it names (RFC 6749 §2.3, OAuth 2.1 §2.4): one method
 * only (a secret in the header and in the body both is refused), a confidential client by the
 * digest of its secret (`digestOfPresented`, computed by the caller), a public one by its id with
 * no secret. Every refusal reads the same to the caller.
 */
export const authenticateClient = (
  presented: PresentedClient,
  client: Client | undefined,
  digestOfPresented: string | undefined
): ClientAuthentication => {
  const refused = ClientAuthentication.Refused({ reason: "client authentication failed" })
  if (client === undefined || presentedClientId(presented) !== client.client_id) return refused
  if (presented.basic !== undefined && presented.client_secret !== undefined) return refused
  const secretGiven = presented.basic !== undefined || presented.client_secret !== undefined
  if (client.public) return secretGiven ? refused : ClientAuthentication.Authenticated({ client, method: "none" })
  if (!secretGiven || client.secret_digest === null || digestOfPresented === undefined) return refused
  if (!constantTimeEqual(client.secret_digest, digestOfPresented)) return refused
  return ClientAuthentication.Authenticated({
    client,
    method: presented.basic !== undefined ? "client_secret_basic" : "client_secret_post"
  })
}
