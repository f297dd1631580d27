import { HttpApiMiddleware, HttpApiSecurity, type HttpRouter } from "@effect/platform"
import { type Context, Effect, Layer, type Redacted, Schema } from "effect"
import { AccessControl } from "../../application/AccessControl.js"
import { StoreUnavailableError } from "../../application/ports/StoreUnavailableError.js"
import { type Principal, Sessions } from "../../application/Sessions.js"
import { AccessLevel, anyPermission, anyRole } from "../../domain/Access.js"
import { AuthorizationError } from "../../domain/errors.js"
import { CurrentPrincipal, resolvePrincipal } from "./Authentication.js"
import { declared, TokenFailure } from "./problems.js"

export { AccessLevel, anyPermission, anyRole } from "../../domain/Access.js"
export { Authentication, AuthenticationLive, CurrentPrincipal } from "./Authentication.js"

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

/** Every way an access level refuses a request: 401 for the token, 403 for the level. */
export const AccessFailure = Schema.Union(TokenFailure, declared(AuthorizationError), declared(StoreUnavailableError))
export type AccessFailure = typeof AccessFailure.Type

/** What an access-level middleware does with the request's bearer token. */
export interface AccessGuardService {
  readonly bearer: (
    token: Redacted.Redacted<string>
  ) => Effect.Effect<Principal, AccessFailure, HttpRouter.HttpRouter.Provided>
}

/** An access-level middleware tag: an HttpApiMiddleware carrying the level it enforces. */
export interface AccessGuardTag<Self> extends Context.Tag<Self, AccessGuardService> {
  readonly level: AccessLevel
}

/**
 * Declares an access-level middleware, in the style of Effect's tags:
 * `class Staff extends AccessGuard<Staff>()("app/Staff", anyRole("staff")) {}`. Its layer is
 * `accessGuardLayer(Staff)`.
 */
export const AccessGuard =
  <Self>() =>
  <const Key extends string>(key: Key, level: AccessLevel) =>
    Object.assign(
      HttpApiMiddleware.Tag<Self>()(key, {
        failure: AccessFailure,
        provides: CurrentPrincipal,
        security: { bearer: HttpApiSecurity.bearer }
      }),
      { level }
    )

/** A middleware that admits users holding at least one of the roles (superusers always). */
export const requireRoles =
  <Self>() =>
  <const Key extends string>(key: Key, ...roles: readonly [string, ...Array<string>]) =>
    AccessGuard<Self>()(key, anyRole(...roles))

/** A middleware that admits users granted at least one of the permissions (superusers always). */
export const requirePermissions =
  <Self>() =>
  <const Key extends string>(key: Key, ...permissions: readonly [string, ...Array<string>]) =>
    AccessGuard<Self>()(key, anyPermission(...permissions))

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

/** Users who proved their email address (GET /me/verified). */
export class RequireVerified extends AccessGuard<RequireVerified>()("http/RequireVerified", AccessLevel.Verified()) {}

/** Superusers only (the admin group). */
export class RequireSuperuser extends AccessGuard<RequireSuperuser>()(
  "http/RequireSuperuser",
  AccessLevel.Superuser()
) {}

/** The built-in access levels' layers; Authentication's is AuthenticationLive. */
export const AccessGuardsLive = Layer.mergeAll(accessGuardLayer(RequireVerified), accessGuardLayer(RequireSuperuser))
