/**
 * `@portcullis/client/resource-server`: what an API or an MCP server guarded by Portcullis's
 * OpenID Provider needs. It publishes its protected-resource metadata (RFC 9728), verifies the
 * access tokens the provider issued for it (RFC 9068: signature by the provider's JWKS, `iss`,
 * `aud` = this resource, `exp`, `typ at+jwt`, scopes) and answers RFC 6750 §3's challenges with the
 * metadata's URL, so that a client (an MCP client, say) discovers where to get a token.
 *
 * Plain Promises and web-standard values, usable from a node:http server or anywhere `fetch`
 * runs, and `verifyEffect` for an Effect server. The one module of the package that needs `jose`.
 */
import { Data, Effect } from "effect"
import { createRemoteJWKSet, errors, type JWTPayload, jwtVerify } from "jose"
import { normaliseResourceUri } from "../../../domain/oidc/Resource.js"

export interface ResourceServerOptions {
  /** The provider's issuer (Portcullis's OIDC_ISSUER), exactly as its discovery names it. */
  readonly issuer: string
  /** This resource's URI as registered with `portcullis resource add`: the `aud` of its tokens. */
  readonly resource: string
  /** The scopes this resource understands, published in its metadata. */
  readonly scopesSupported?: ReadonlyArray<string>
  /** A name for people, published in its metadata. */
  readonly resourceName?: string
  /** The provider's JWKS; read from its discovery document when not given. */
  readonly jwksUri?: string
  /** Seconds of clock difference tolerated on `exp` and `iat` (default 30). */
  readonly clockToleranceSeconds?: number
}

/** The claims of a verified access token (RFC 9068 §2.2). */
export interface AccessClaims extends JWTPayload {
  readonly sub: string
  readonly client_id: string
  readonly scope: string
  readonly scopes: ReadonlyArray<string>
}

/** What a request's bearer token is worth: its claims, or the answer to send back instead. */
export type Verdict =
  | { readonly ok: true; readonly claims: AccessClaims }
  | {
      readonly ok: false
      readonly status: 401 | 403
      readonly headers: Readonly<Record<string, string>>
      readonly body: { readonly error?: string; readonly error_description: string }
    }

/**
 * A resource URI as the provider compares it (the provider's own rule): scheme and host
 * lower-cased, default port dropped, one trailing slash ignored. Throws for what cannot be a
 * resource (not an absolute http(s) URI, a fragment, credentials).
 */
export const normaliseResource = (uri: string): string => {
  const normalised = normaliseResourceUri(uri)
  if (normalised === undefined)
    throw new TypeError(`${JSON.stringify(uri)} cannot be a resource: an absolute http(s) URI without a fragment`)
  return normalised
}

/** Where a resource's metadata lives (RFC 9728 §3.1): the well-known path, with the resource's path appended. */
export const protectedResourceMetadataPath = (resource: string): string => {
  const path = new URL(resource).pathname.replace(/\/+$/, "")
  return `/.well-known/oauth-protected-resource${path}`
}

/** An auth-param value of a challenge, quoted (RFC 9110 §11.2). */
const quoted = (value: string) => `"${value.replace(/[\\"]/g, (character) => `\\${character}`)}"`

/**
 * A guard for one resource: its metadata and where it is served, and `verify`, which judges a
 * request's `Authorization` header for the scopes a route needs.
 */
export const resourceServer = (options: ResourceServerOptions) => {
  const resource = normaliseResource(options.resource)
  const issuer = options.issuer.replace(/\/+$/, "")
  const metadataPath = protectedResourceMetadataPath(resource)
  const metadataUrl = `${new URL(resource).origin}${metadataPath}`
  const metadata = {
    resource,
    authorization_servers: [issuer],
    bearer_methods_supported: ["header"],
    ...(options.scopesSupported === undefined ? {} : { scopes_supported: [...options.scopesSupported] }),
    ...(options.resourceName === undefined ? {} : { resource_name: options.resourceName })
  }

  let keys: ReturnType<typeof createRemoteJWKSet> | undefined
  /** The provider's keys, its discovery read once when no JWKS was named. */
  const keySet = async () => {
    if (keys !== undefined) return keys
    let jwksUri = options.jwksUri
    if (jwksUri === undefined) {
      const discovery = await fetch(`${issuer}/.well-known/openid-configuration`, {
        signal: AbortSignal.timeout(5_000)
      })
      if (!discovery.ok) throw new Error(`the provider's discovery answered ${discovery.status}`)
      jwksUri = String(((await discovery.json()) as { jwks_uri?: unknown }).jwks_uri ?? "")
    }
    keys = createRemoteJWKSet(new URL(jwksUri))
    return keys
  }

  const challenge = (
    status: 401 | 403,
    error: string | undefined,
    description: string,
    scopes: ReadonlyArray<string> = []
  ): Verdict => {
    const params = [
      ...(error === undefined ? [] : [`error=${quoted(error)}`, `error_description=${quoted(description)}`]),
      ...(scopes.length > 0 ? [`scope=${quoted(scopes.join(" "))}`] : []),
      `resource_metadata=${quoted(metadataUrl)}`
    ]
    return {
      ok: false,
      status,
      headers: { "www-authenticate": `Bearer ${params.join(", ")}`, "cache-control": "no-store" },
      body: { ...(error === undefined ? {} : { error }), error_description: description }
    }
  }

  /**
   * The claims of the request's bearer token when it is a live access token of the provider for
   * this resource holding every scope of `required`; otherwise the challenge to answer: 401
   * (none, or not valid: `invalid_token`) or 403 (`insufficient_scope`, naming the scopes).
   */
  const verify = async (authorization: string | undefined, required: ReadonlyArray<string> = []): Promise<Verdict> => {
    const match = /^Bearer +([A-Za-z0-9\-._~+/]+=*)$/i.exec(authorization?.trim() ?? "")
    // A 401 names no scope: a client then asks for what the metadata lists (scopes_supported);
    // only a 403 says which scopes the route needs (RFC 6750 §3).
    if (match === null)
      return authorization === undefined || authorization.trim() === ""
        ? challenge(401, undefined, "a bearer token is required")
        : challenge(401, "invalid_request", "the Authorization header is not a bearer token")
    let payload: JWTPayload
    try {
      const verified = await jwtVerify(match[1] as string, await keySet(), {
        issuer,
        audience: resource,
        typ: "at+jwt",
        algorithms: ["RS256"],
        clockTolerance: options.clockToleranceSeconds ?? 30
      })
      payload = verified.payload
    } catch (error) {
      const description =
        error instanceof errors.JWTExpired
          ? "the access token has expired"
          : error instanceof errors.JWTClaimValidationFailed && error.claim === "aud"
            ? "the access token is for another resource"
            : "the access token is not valid"
      return challenge(401, "invalid_token", description)
    }
    if (typeof payload.sub !== "string" || typeof payload.client_id !== "string")
      return challenge(401, "invalid_token", "the access token is not valid")
    const scopes = typeof payload.scope === "string" ? payload.scope.split(" ").filter((word) => word !== "") : []
    const missing = required.filter((scope) => !scopes.includes(scope))
    if (missing.length > 0)
      return challenge(403, "insufficient_scope", `the access token lacks ${missing.join(", ")}`, required)
    return {
      ok: true,
      claims: { ...payload, sub: payload.sub, client_id: payload.client_id, scope: scopes.join(" "), scopes }
    }
  }

  return { resource, metadata, metadataPath, metadataUrl, verify } as const
}

export type ResourceServer = ReturnType<typeof resourceServer>

/** The parts of node:http's request and response a guard uses. */
interface NodeRequest {
  readonly method?: string | undefined
  readonly url?: string | undefined
  readonly headers: Readonly<Record<string, string | ReadonlyArray<string> | undefined>>
}
interface NodeResponse {
  writeHead(status: number, headers: Record<string, string>): unknown
  end(body?: string): unknown
}

const send = (response: NodeResponse, status: number, headers: Readonly<Record<string, string>>, body: unknown) => {
  response.writeHead(status, { "content-type": "application/json", ...headers })
  response.end(JSON.stringify(body))
}

/**
 * For a node:http server: `metadata(request, response)` answers the metadata route (true when it
 * did), and `guard(request, response, scopes)` answers the challenge itself and resolves to the
 * claims, or to undefined when it answered.
 */
export const nodeGuard = (server: ResourceServer) => ({
  metadata: (request: NodeRequest, response: NodeResponse): boolean => {
    if (request.method !== "GET" || (request.url ?? "").split("?")[0] !== server.metadataPath) return false
    send(response, 200, { "access-control-allow-origin": "*", "cache-control": "max-age=300" }, server.metadata)
    return true
  },
  guard: async (
    request: NodeRequest,
    response: NodeResponse,
    required: ReadonlyArray<string> = []
  ): Promise<AccessClaims | undefined> => {
    const header = request.headers.authorization
    const verdict = await server.verify(typeof header === "string" ? header : undefined, required)
    if (verdict.ok) return verdict.claims
    send(response, verdict.status, verdict.headers, verdict.body)
    return undefined
  }
})

/** The answer a request without a fitting token gets instead (RFC 6750 §3), as an Effect failure. */
export class ResourceChallenge extends Data.TaggedError("ResourceChallenge")<{
  readonly status: 401 | 403
  readonly headers: Readonly<Record<string, string>>
  readonly body: { readonly error?: string; readonly error_description: string }
}> {}

/**
 * For an Effect server: the claims of the request's bearer token, or a `ResourceChallenge` to
 * answer with (its status, WWW-Authenticate header and body).
 */
export const verifyEffect = (
  server: ResourceServer,
  authorization: string | undefined,
  required: ReadonlyArray<string> = []
): Effect.Effect<AccessClaims, ResourceChallenge> =>
  Effect.flatMap(
    Effect.promise(() => server.verify(authorization, required)),
    (verdict): Effect.Effect<AccessClaims, ResourceChallenge> =>
      verdict.ok
        ? Effect.succeed(verdict.claims)
        : Effect.fail(new ResourceChallenge({ status: verdict.status, headers: verdict.headers, body: verdict.body }))
  )
