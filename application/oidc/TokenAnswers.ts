import { Data, Effect } from "effect"
import { narrowResources } from "../../domain/oidc/Resource.js"

/** An error of the token endpoint in OAuth's own shape (RFC 6749 §5.2): 401 for invalid_client, else 400. */
export class TokenEndpointError extends Data.TaggedError("TokenEndpointError")<{
  readonly error:
    | "invalid_request"
    | "invalid_client"
    | "invalid_grant"
    | "unauthorized_client"
    | "unsupported_grant_type"
    | "invalid_scope"
    | "invalid_target"
  readonly error_description: string
}> {}

/** A successful token response (RFC 6749 §5.1, OIDC Core §3.1.3.3). */
export interface TokenResponse {
  readonly access_token: string
  readonly token_type: "Bearer"
  readonly expires_in: number
  readonly scope: string
  readonly refresh_token?: string
  readonly id_token?: string
}

export const refuse = (error: TokenEndpointError["error"], error_description: string) =>
  new TokenEndpointError({ error, error_description })

/** The resources a token request names, within `granted` (RFC 8707): invalid_target when it would widen them. */
export const narrowedResources = (asked: ReadonlyArray<string>, granted: ReadonlyArray<string>) => {
  const decision = narrowResources(asked, granted)
  return decision._tag === "InvalidTarget"
    ? Effect.fail(refuse("invalid_target", decision.error_description))
    : Effect.succeed(decision.uris)
}
