import { DateTime, Effect, Metric, Option } from "effect"
import { isCodeVerifier } from "../../domain/oidc/Authorization.js"
import { claimsFor, issuesRefreshToken } from "../../domain/oidc/Claims.js"
import { authenticateClient, type Client, type PresentedClient, presentedClientId } from "../../domain/oidc/Client.js"
import { decideRedemption } from "../../domain/oidc/Code.js"
import { decideGrantRefresh, type Grant } from "../../domain/oidc/Grant.js"
import { audienceOf } from "../../domain/oidc/Resource.js"
import { UserId } from "../../domain/User.js"
import { Audit } from "../Audit.js"
import { oidcRefusals, oidcTokenGrants } from "../metrics.js"
import { AuthorizationCodes } from "../ports/AuthorizationCodes.js"
import { Cryptography } from "../ports/Cryptography.js"
import { OidcClients } from "../ports/OidcClients.js"
import { OidcGrants } from "../ports/OidcGrants.js"
import { ProviderTokens } from "../ports/ProviderTokens.js"
import { RoleRepo } from "../ports/RoleRepo.js"
import type { StoreUnavailableError } from "../ports/StoreUnavailableError.js"
import { UserRepo } from "../ports/UserRepo.js"
import { OidcPolicy } from "./OidcPolicy.js"
import { narrowedResources, refuse, type TokenEndpointError, type TokenResponse } from "./TokenAnswers.js"

/** A token request's form: the first value of each parameter. */
type Form = Readonly<Record<string, string | undefined>>

const words = (value: string | undefined) => (value ?? "").split(" ").filter((word) => word !== "")

/**
 * The token endpoint (RFC 6749 §3.2, OAuth 2.1 §4): a code redeemed once for the grant it starts,
 * a grant's refresh token rotated with reuse detection, and client_credentials for a client
 * registered for it. Every request authenticates its client first.
 */
export class Token extends Effect.Service<Token>()("app/Token", {
  effect: Effect.gen(function* () {
    const clients = yield* OidcClients
    const codes = yield* AuthorizationCodes
    const grants = yield* OidcGrants
    const users = yield* UserRepo
    const roles = yield* RoleRepo
    const tokens = yield* ProviderTokens
    const crypto = yield* Cryptography
    const audit = yield* Audit
    const { lifetimes } = yield* OidcPolicy

    const authenticate = (presented: PresentedClient) =>
      Effect.gen(function* () {
        const clientId = presentedClientId(presented)
        const client = clientId === undefined ? undefined : Option.getOrUndefined(yield* clients.find(clientId))
        const secret = presented.basic?.client_secret ?? presented.client_secret
        const decision = authenticateClient(presented, client, secret === undefined ? undefined : crypto.digest(secret))
        if (decision._tag === "Refused") return yield* refuse("invalid_client", decision.reason)
        return decision.client
      })

    /** The claims of the user the grant shows, read now (a role given since shows at the next refresh). */
    const userClaims = (userId: string, scopes: ReadonlyArray<string>) =>
      Effect.gen(function* () {
        const user = yield* users.findById(UserId.make(userId))
        if (Option.isNone(user) || !user.value.is_active)
          return yield* refuse("invalid_grant", "the user of this grant cannot sign in")
        const permissions = scopes.includes("permissions") ? yield* roles.permissionsOfRoles(user.value.roles) : []
        return claimsFor(
          {
            id: user.value.id,
            email: user.value.email,
            is_verified: user.value.is_verified,
            roles: user.value.roles,
            permissions,
            fields: user.value.fields,
            updated_at: null
          },
          scopes
        )
      })

    /**
     * The tokens of a grant: an access token for `resources` (the grant's, or fewer), an ID token
     * under `openid`, the refresh token given.
     */
    const issue = (
      grant: Grant,
      refreshToken: string | undefined,
      nonce: string | null,
      resources: ReadonlyArray<string>
    ): Effect.Effect<TokenResponse, TokenEndpointError | StoreUnavailableError> =>
      Effect.gen(function* () {
        const claims = yield* userClaims(grant.user_id, grant.scopes)
        const scope = grant.scopes.join(" ")
        const access_token = yield* tokens.accessToken(
          {
            sub: grant.user_id,
            aud: audienceOf(resources, grant.client_id),
            client_id: grant.client_id,
            scope,
            jti: yield* crypto.randomId,
            auth_time: grant.auth_time,
            grant_id: grant.grant_id
          },
          lifetimes.accessSeconds
        )
        const id_token = grant.scopes.includes("openid")
          ? yield* tokens.idToken(
              {
                ...claims,
                aud: grant.client_id,
                azp: grant.client_id,
                auth_time: grant.auth_time,
                amr: grant.amr,
                ...(nonce === null ? {} : { nonce })
              },
              lifetimes.idTokenSeconds
            )
          : undefined
        return {
          access_token,
          token_type: "Bearer" as const,
          expires_in: lifetimes.accessSeconds,
          scope,
          ...(refreshToken === undefined ? {} : { refresh_token: refreshToken }),
          ...(id_token === undefined ? {} : { id_token })
        }
      })

    /** A new refresh token of the grant: the token, and its row. */
    const newRefreshToken = (grantId: string, now: DateTime.Utc) =>
      Effect.map(crypto.randomSecret, (token) => ({
        token,
        row: {
          digest: crypto.digest(token),
          grant_id: grantId,
          issued_at: now,
          expires_at: DateTime.add(now, { seconds: lifetimes.refreshSeconds }),
          rotated_at: null
        }
      }))

    const authorizationCode = (client: Client, form: Form, resourcesAsked: ReadonlyArray<string>) =>
      Effect.gen(function* () {
        if (form.code === undefined || form.code === "") return yield* refuse("invalid_request", "code is missing")
        const digest = crypto.digest(form.code)
        const now = yield* DateTime.now
        const verifier = form.code_verifier
        const decision = decideRedemption(
          Option.getOrUndefined(yield* codes.find(digest)),
          {
            client_id: client.client_id,
            redirect_uri: form.redirect_uri,
            challenge_of_verifier:
              verifier !== undefined && isCodeVerifier(verifier) ? crypto.s256(verifier) : undefined
          },
          now
        )
        if (decision._tag === "Refuse") return yield* refuse("invalid_grant", decision.reason)
        // A code presented twice leaked: what its first redemption issued ends (RFC 6749 §4.1.2).
        const replayed = (familyId: Option.Option<string>) =>
          Effect.gen(function* () {
            yield* Effect.logWarning("authorization code presented again; ending its grant")
            yield* Option.match(familyId, { onNone: () => Effect.void, onSome: (id) => grants.revoke(id, now) })
            return yield* refuse("invalid_grant", "the code has been used")
          })
        if (decision._tag === "Replayed") return yield* replayed(yield* codes.markReplayed(digest, now))
        const code = decision.code
        // Checked before the code is spent: a request that widens its resources leaves the code as it was.
        const resources = yield* narrowedResources(resourcesAsked, code.resources)
        const grant: Grant = {
          grant_id: yield* crypto.randomId,
          client_id: client.client_id,
          user_id: code.user_id,
          scopes: code.scopes,
          resources: code.resources,
          auth_time: code.auth_time,
          amr: code.amr,
          created_at: now,
          last_used_at: now,
          expires_at: DateTime.add(now, { seconds: lifetimes.refreshSeconds }),
          revoked_at: null
        }
        const refresh = issuesRefreshToken(code.scopes) ? yield* newRefreshToken(grant.grant_id, now) : undefined
        // The code spent (marked with its grant) and the grant started commit together: no grant
        // without its code's mark, so a replay always finds the grant to end.
        const started = yield* grants.startFromCode(digest, grant, Option.fromNullable(refresh?.row))
        if (!started) return yield* replayed(yield* codes.markReplayed(digest, now))
        return yield* issue(grant, refresh?.token, code.nonce, resources)
      })

    const refreshToken = (client: Client, form: Form, resourcesAsked: ReadonlyArray<string>) =>
      Effect.gen(function* () {
        if (form.refresh_token === undefined || form.refresh_token === "")
          return yield* refuse("invalid_request", "refresh_token is missing")
        const digest = crypto.digest(form.refresh_token)
        const now = yield* DateTime.now
        const found = Option.getOrUndefined(yield* grants.presented(digest))
        // Another client's token reads as unknown: a client learns nothing of another's grants.
        const decision = decideGrantRefresh(found?.grant.client_id === client.client_id ? found : undefined, now)
        switch (decision._tag) {
          case "Unknown":
            return yield* refuse("invalid_grant", "the refresh token is not known")
          case "Revoked":
            return yield* refuse("invalid_grant", "the grant has ended")
          case "Expired":
            return yield* refuse("invalid_grant", "the refresh token has expired")
          case "ReuseDetected": {
            yield* grants.revoke(decision.grant.grant_id, now)
            yield* audit.record({
              type: "refresh.reuse_detected",
              user_id: UserId.make(decision.grant.user_id),
              details: { grant_id: decision.grant.grant_id, client_id: client.client_id }
            })
            return yield* refuse("invalid_grant", "the refresh token has been used; the grant has ended")
          }
          case "Rotate": {
            const asked = words(form.scope)
            if (asked.some((scope) => !decision.grant.scopes.includes(scope)))
              return yield* refuse("invalid_scope", "a refresh may narrow the grant's scopes, never widen them")
            const resources = yield* narrowedResources(resourcesAsked, decision.grant.resources)
            const next = yield* newRefreshToken(decision.grant.grant_id, now)
            if (!(yield* grants.rotate(digest, next.row, now)))
              return yield* refuse("invalid_grant", "the refresh token has been used")
            const scopes = asked.length > 0 ? asked : decision.grant.scopes
            return yield* issue({ ...decision.grant, scopes }, next.token, null, resources)
          }
        }
      })

    const clientCredentials = (client: Client, form: Form, resourcesAsked: ReadonlyArray<string>) =>
      Effect.gen(function* () {
        if (resourcesAsked.length > 0)
          return yield* refuse("invalid_target", "client_credentials tokens are for the client itself, not a resource")
        if (client.public || !client.grants.includes("client_credentials"))
          return yield* refuse("unauthorized_client", "this client is not registered for client_credentials")
        const asked = words(form.scope)
        if (asked.some((scope) => !client.scopes.includes(scope)))
          return yield* refuse("invalid_scope", "client_credentials takes only the client's own scopes")
        const scope = asked.join(" ")
        const access_token = yield* tokens.accessToken(
          {
            sub: client.client_id,
            aud: client.client_id,
            client_id: client.client_id,
            scope,
            jti: yield* crypto.randomId
          },
          lifetimes.accessSeconds
        )
        const answer: TokenResponse = { access_token, token_type: "Bearer", expires_in: lifetimes.accessSeconds, scope }
        return answer
      })

    /** A token request: its form (first value of each parameter) and how its client presented itself. */
    const exchange = (
      form: Form,
      presented: PresentedClient,
      resourcesAsked: ReadonlyArray<string> = []
    ): Effect.Effect<TokenResponse, TokenEndpointError | StoreUnavailableError> =>
      Effect.gen(function* () {
        if (form.grant_type === undefined || form.grant_type === "")
          return yield* refuse("invalid_request", "grant_type is missing")
        const client = yield* authenticate(presented)
        switch (form.grant_type) {
          case "authorization_code":
            return yield* authorizationCode(client, form, resourcesAsked)
          case "refresh_token":
            return yield* refreshToken(client, form, resourcesAsked)
          case "client_credentials":
            return yield* clientCredentials(client, form, resourcesAsked)
          default:
            return yield* refuse("unsupported_grant_type", "grant_type is not one this server supports")
        }
      }).pipe(
        Effect.tapBoth({
          onSuccess: () => Metric.increment(Metric.tagged(oidcTokenGrants, "grant_type", form.grant_type ?? "")),
          onFailure: (error) =>
            error._tag === "TokenEndpointError"
              ? Metric.increment(Metric.tagged(oidcRefusals, "error", error.error))
              : Effect.void
        })
      )

    return { exchange, authenticate, userClaims } as const
  })
}) {}
