import { Data, DateTime, Effect, Option } from "effect"
import type { PresentedClient } from "../../domain/oidc/Client.js"
import { Cryptography } from "../ports/Cryptography.js"
import { OidcGrants } from "../ports/OidcGrants.js"
import { OidcResources } from "../ports/OidcResources.js"
import { ProviderTokens, type VerifiedAccessToken } from "../ports/ProviderTokens.js"
import { Token } from "./Token.js"
import { TokenEndpointError } from "./TokenAnswers.js"

/** A bearer token refused at a resource of the provider (userinfo): RFC 6750 §3.1's codes. */
export class BearerTokenError extends Data.TaggedError("BearerTokenError")<{
  readonly error: "invalid_token" | "insufficient_scope"
  readonly error_description: string
}> {}

const invalidToken = (error_description: string) => new BearerTokenError({ error: "invalid_token", error_description })

/** What an introspection answers (RFC 7662 §2.2): nothing but `active: false` for a token not good for the caller. */
export type Introspection =
  | { readonly active: false }
  | {
      readonly active: true
      readonly scope: string
      readonly client_id: string
      readonly sub: string
      readonly token_type: "Bearer" | "refresh_token"
      readonly exp: number
      readonly iat?: number
      readonly iss: string
      readonly aud?: string | ReadonlyArray<string>
      readonly jti?: string
    }

const inactive: Introspection = { active: false }
const seconds = (time: DateTime.Utc) => Math.floor(DateTime.toEpochMillis(time) / 1000)

/**
 * The provider's tokens where they are used and ended: an access token checked at userinfo (its
 * grant still live), revoked (RFC 7009) and introspected (RFC 7662) by the client they were
 * issued to. An access token of a user names its grant: once the grant ends, the token is refused.
 */
export class GrantTokens extends Effect.Service<GrantTokens>()("app/GrantTokens", {
  effect: Effect.gen(function* () {
    const tokens = yield* ProviderTokens
    const grants = yield* OidcGrants
    const resources = yield* OidcResources
    const crypto = yield* Cryptography
    const token = yield* Token

    /** An access token of this issuer whose grant (for a user's token) is live. */
    const verified = (accessToken: string) =>
      Effect.gen(function* () {
        const claims = yield* Effect.option(tokens.verifyAccessToken(accessToken))
        if (Option.isNone(claims)) return Option.none<VerifiedAccessToken>()
        // A token for a client itself (client_credentials) has no grant; every user's token has one.
        if (claims.value.sub === claims.value.client_id && claims.value.grant_id === undefined) return claims
        if (claims.value.grant_id === undefined) return Option.none<VerifiedAccessToken>()
        const grant = yield* grants.find(claims.value.grant_id)
        const live = Option.isSome(grant) && grant.value.revoked_at === null
        return live ? claims : Option.none<VerifiedAccessToken>()
      })

    /** The claims UserInfo answers (OIDC Core §5.3) for a token with `openid`, its grant live. */
    const userinfo = (accessToken: string | undefined) =>
      Effect.gen(function* () {
        if (accessToken === undefined || accessToken === "") return yield* invalidToken("a bearer token is required")
        const claims = yield* verified(accessToken)
        if (Option.isNone(claims) || claims.value.grant_id === undefined)
          return yield* invalidToken("the access token is not valid")
        const scopes = claims.value.scope.split(" ")
        if (!scopes.includes("openid"))
          return yield* new BearerTokenError({ error: "insufficient_scope", error_description: "openid is required" })
        return yield* token
          .userClaims(claims.value.sub, scopes)
          .pipe(Effect.catchTag("TokenEndpointError", () => invalidToken("the user of this token cannot sign in")))
      })

    /** A refresh token of a live grant, as it stands. */
    const refreshHolder = (presented: string) =>
      Effect.map(grants.presented(crypto.digest(presented)), (found) =>
        Option.filter(found, ({ grant }) => grant.revoked_at === null)
      )

    /**
     * Revocation (RFC 7009): a refresh token ends its grant; so does an access token of a user's
     * grant (the grant's tokens are refused from then on). A token of another client, unknown or
     * already ended is answered the same: nothing to do.
     */
    const revoke = (form: Readonly<Record<string, string | undefined>>, presented: PresentedClient) =>
      Effect.gen(function* () {
        const client = yield* token.authenticate(presented)
        const value = form.token
        if (value === undefined || value === "") return false
        const now = yield* DateTime.now
        const refresh = yield* refreshHolder(value)
        if (Option.isSome(refresh)) {
          return refresh.value.grant.client_id === client.client_id
            ? yield* grants.revoke(refresh.value.grant.grant_id, now)
            : false
        }
        const access = yield* Effect.option(tokens.verifyAccessToken(value))
        if (Option.isNone(access) || access.value.client_id !== client.client_id) return false
        return access.value.grant_id === undefined ? false : yield* grants.revoke(access.value.grant_id, now)
      })

    /** Whether `client` introspects for a resource among the token's audience (`portcullis resource add --client`). */
    const introspectsFor = (clientId: string, aud: string | ReadonlyArray<string>) =>
      Effect.map(
        Effect.forEach(typeof aud === "string" ? [aud] : aud, (uri) => resources.find(uri)),
        (found) => found.some((resource) => Option.isSome(resource) && resource.value.introspecting_client === clientId)
      )

    /**
     * Introspection (RFC 7662): only a confidential client's own tokens read as active, and the
     * access tokens of a resource it introspects for.
     */
    const introspect = (form: Readonly<Record<string, string | undefined>>, presented: PresentedClient) =>
      Effect.gen(function* () {
        const client = yield* token.authenticate(presented)
        if (client.public)
          return yield* new TokenEndpointError({
            error: "invalid_client",
            error_description: "introspection answers confidential clients only"
          })
        const value = form.token
        if (value === undefined || value === "") return inactive
        const now = yield* DateTime.now
        const refresh = yield* refreshHolder(value)
        if (Option.isSome(refresh)) {
          const { grant, token: held } = refresh.value
          const live = held.rotated_at === null && DateTime.lessThan(now, held.expires_at)
          if (!live || grant.client_id !== client.client_id) return inactive
          return {
            active: true,
            scope: grant.scopes.join(" "),
            client_id: grant.client_id,
            sub: grant.user_id,
            token_type: "refresh_token",
            exp: seconds(held.expires_at),
            iat: seconds(held.issued_at),
            iss: tokens.issuer
          } satisfies Introspection
        }
        const access = yield* verified(value)
        if (Option.isNone(access)) return inactive
        const mine =
          access.value.client_id === client.client_id || (yield* introspectsFor(client.client_id, access.value.aud))
        if (!mine) return inactive
        const claims = access.value
        return {
          active: true,
          scope: claims.scope,
          client_id: claims.client_id,
          sub: claims.sub,
          token_type: "Bearer",
          exp: claims.exp,
          iat: claims.iat,
          iss: claims.iss,
          aud: claims.aud,
          jti: claims.jti
        } satisfies Introspection
      })

    return { userinfo, revoke, introspect } as const
  })
}) {}
