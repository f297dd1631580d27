import { HttpApiMiddleware, HttpApiSecurity } from "@effect/platform"
import { Context, Effect, Layer, Option, Redacted, Schema } from "effect"
import { StoreUnavailableError } from "../../application/ports/StoreUnavailableError.js"
import { type Principal, Sessions } from "../../application/Sessions.js"
import { declared, TokenFailure } from "./problems.js"

/** The user and access-token claims of the request, provided by Authentication. */
export class CurrentPrincipal extends Context.Tag("http/CurrentPrincipal")<CurrentPrincipal, Principal>() {}

/** Bearer access tokens: verified, checked against revocations, resolved to an active user. */
export class Authentication extends HttpApiMiddleware.Tag<Authentication>()("http/Authentication", {
  failure: Schema.Union(TokenFailure, declared(StoreUnavailableError)),
  provides: CurrentPrincipal,
  security: { bearer: HttpApiSecurity.bearer }
}) {}

/**
 * The request's principal: the one an outer access middleware already resolved for this request,
 * else the bearer token's. Stacked middlewares (Authentication plus access levels) so verify
 * the token and load the user once.
 */
export const resolvePrincipal = (sessions: Sessions, token: Redacted.Redacted<string>) =>
  Effect.flatMap(
    Effect.serviceOption(CurrentPrincipal),
    Option.match({ onSome: Effect.succeed, onNone: () => sessions.authenticate(Redacted.value(token)) })
  )

export const AuthenticationLive = Layer.effect(
  Authentication,
  Effect.map(Sessions, (sessions) => Authentication.of({ bearer: (token) => resolvePrincipal(sessions, token) }))
)
