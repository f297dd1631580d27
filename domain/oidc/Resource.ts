import { Data } from "effect"

/**
 * A protected resource (an API, an MCP server) the provider issues access tokens for (RFC 8707):
 * registered with `portcullis resource add`, named by its URI, which becomes the tokens' `aud`.
 */
export interface Resource {
  /** The URI, normalised (normaliseResourceUri). */
  readonly uri: string
  /** Scopes this resource defines, which any client may ask for beside the standard ones. */
  readonly scopes: ReadonlyArray<string>
  /** The confidential client that may introspect this resource's tokens, if any. */
  readonly introspecting_client: string | null
}

const defaultPorts: Readonly<Record<string, string>> = { "http:": "80", "https:": "443" }

/**
 * A resource indicator as compared (RFC 8707 §2): an absolute http(s) URI without a fragment,
 * its scheme and host lower-cased, its default port dropped and one trailing slash ignored; its
 * path and query otherwise kept as sent. Undefined when it is not such a URI.
 */
export const normaliseResourceUri = (raw: string): string | undefined => {
  if (raw.includes("#") || !/^[a-z][a-z0-9+.-]*:\/\//i.test(raw)) return undefined
  let url: URL
  try {
    url = new URL(raw)
  } catch {
    return undefined
  }
  if (url.protocol !== "https:" && url.protocol !== "http:") return undefined
  if (url.username !== "" || url.password !== "") return undefined
  const port = url.port === "" || url.port === defaultPorts[url.protocol] ? "" : `:${url.port}`
  const path = url.pathname.length > 1 && url.pathname.endsWith("/") ? url.pathname.slice(0, -1) : url.pathname
  return `${url.protocol}//${url.hostname}${port}${path === "/" ? "" : path}${url.search}`
}

export type ResourceDecision = Data.TaggedEnum<{
  /** The resources named, normalised, in the order asked, each once. */
  Resources: { readonly uris: ReadonlyArray<string> }
  /** `invalid_target` (RFC 8707 §2): a resource that is not a URI, not registered, or not granted. */
  InvalidTarget: { readonly error_description: string }
}>
export const ResourceDecision = Data.taggedEnum<ResourceDecision>()

/**
 * The resources an authorization request names (its `resource` parameters), each a registered
 * one (`isRegistered` takes the normalised URI); none named is no resource.
 */
export const decideRequestedResources = (
  asked: ReadonlyArray<string>,
  isRegistered: (uri: string) => boolean
): ResourceDecision => {
  const uris: Array<string> = []
  for (const raw of asked) {
    const uri = normaliseResourceUri(raw)
    if (uri === undefined)
      return ResourceDecision.InvalidTarget({
        error_description: "resource must be an absolute http(s) URI without a fragment"
      })
    if (!isRegistered(uri))
      return ResourceDecision.InvalidTarget({ error_description: "resource is not one this server issues tokens for" })
    if (!uris.includes(uri)) uris.push(uri)
  }
  return ResourceDecision.Resources({ uris })
}

/**
 * The resources a token request (a code's redemption, a refresh) names, within what the grant
 * holds: none named keeps the grant's; naming some narrows to them; naming one the grant does not
 * hold widens, and is refused.
 */
export const narrowResources = (asked: ReadonlyArray<string>, granted: ReadonlyArray<string>): ResourceDecision => {
  if (asked.length === 0) return ResourceDecision.Resources({ uris: granted })
  const uris: Array<string> = []
  for (const raw of asked) {
    const uri = normaliseResourceUri(raw)
    if (uri === undefined)
      return ResourceDecision.InvalidTarget({
        error_description: "resource must be an absolute http(s) URI without a fragment"
      })
    if (!granted.includes(uri))
      return ResourceDecision.InvalidTarget({
        error_description: "a token request may narrow the grant's resources, never widen them"
      })
    if (!uris.includes(uri)) uris.push(uri)
  }
  return ResourceDecision.Resources({ uris })
}

/** An access token's `aud`: its resources when it names any (one as a string), else the client. */
export const audienceOf = (resources: ReadonlyArray<string>, clientId: string): string | ReadonlyArray<string> =>
  resources.length === 0 ? clientId : resources.length === 1 ? (resources[0] as string) : resources
