import { Effect, Layer, Option, Redacted } from "effect"
import { Sessions } from "../../application/Sessions.js"
import { Authentication, CurrentPrincipal } from "./security.js"

export { Authentication, CurrentPrincipal } from "./security.js"

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
