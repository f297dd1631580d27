import { Effect, Layer } from "effect"
import { AccessControl } from "../../application/AccessControl.js"
import { Sessions } from "../../application/Sessions.js"
import { resolvePrincipal } from "./Authentication.js"
import { type AccessGuardTag, RequireSuperuser, RequireVerified } from "./security.js"

export { AccessLevel, anyPermission, anyRole } from "../../domain/Access.js"
export { AuthenticationLive } from "./Authentication.js"
export {
  AccessFailure,
  AccessGuard,
  type AccessGuardService,
  type AccessGuardTag,
  Authentication,
  CurrentPrincipal,
  RequireSuperuser,
  RequireVerified,
  requirePermissions,
  requireRoles
} from "./security.js"

/**
 * Access levels as HttpApi middleware a deployment can put on any group or endpoint.
 *
 * Each level is a complete bearer middleware: it authenticates the access token itself (so a
 * route needs no other middleware), checks the level against the store, and provides
 * CurrentPrincipal. Stacked levels must all pass; the token is verified and the user loaded
 * once per request whichever order they run in. Roles and permissions are read from the store
 * on every check, so a grant or removal counts from the user's next request.
 *
 * ```ts
 * class Editors extends requireRoles<Editors>()("app/Editors", "editor", "chief-editor") {}
 * class Publishers extends requirePermissions<Publishers>()("app/Publishers", "posts:publish") {}
 * const group = HttpApiGroup.make("posts").add(...).middleware(Editors)
 * // and with the handlers: Layer.provide([accessGuardLayer(Editors), accessGuardLayer(Publishers)])
 * ```
 */

/** The layer implementing an access-level middleware, over the Sessions and AccessControl use cases. */
export const accessGuardLayer = <Self>(
  guard: AccessGuardTag<Self>
): Layer.Layer<Self, never, Sessions | AccessControl> =>
  Layer.effect(
    guard,
    Effect.gen(function* () {
      const sessions = yield* Sessions
      const access = yield* AccessControl
      return guard.of({
        bearer: (token) =>
          Effect.tap(resolvePrincipal(sessions, token), (principal) => access.require(principal.user, guard.level))
      })
    })
  )

/** The built-in access levels' layers; Authentication's is AuthenticationLive. */
export const AccessGuardsLive = Layer.mergeAll(accessGuardLayer(RequireVerified), accessGuardLayer(RequireSuperuser))
