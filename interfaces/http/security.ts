import * as HttpApiMiddleware from "@effect/platform/HttpApiMiddleware"
import * as HttpApiSecurity from "@effect/platform/HttpApiSecurity"
import type * as HttpRouter from "@effect/platform/HttpRouter"
import { Context, type Effect, type Redacted, Schema } from "effect"
import type { Principal } from "../../application/Sessions.js"
import { AccessLevel, anyPermission, anyRole } from "../../domain/Access.js"
import { AuthorizationError, RateLimitedError, StoreUnavailableError } from "../../domain/errors.js"
import { declared, TokenFailure } from "./problemSchemas.js"

/**
 * The API's security middlewares as the definition names them: what each asks of a request (a
 * bearer token) and how each refuses. Their layers are the server's (Authentication.ts,
 * AccessLevels.ts); a client needs only these tags.
 */

/** The user and access-token claims of the request, provided by Authentication. */
export class CurrentPrincipal extends Context.Tag("http/CurrentPrincipal")<CurrentPrincipal, Principal>() {}

/** Bearer access tokens: verified, checked against revocations, resolved to an active user. */
export class Authentication extends HttpApiMiddleware.Tag<Authentication>()("http/Authentication", {
  failure: Schema.Union(TokenFailure, declared(StoreUnavailableError)),
  provides: CurrentPrincipal,
  security: { bearer: HttpApiSecurity.bearer }
}) {}

/**
 * The passkey_register bucket, counted per signed-in user (not per client address: a stolen
 * access token may be used from anywhere) before the body is read, as every limited route counts
 * valid and invalid requests alike. It needs the principal: on an endpoint, name it BEFORE
 * Authentication, since a middleware named later wraps, and so runs before, those named earlier.
 */
export class PasskeyRegisterLimit extends HttpApiMiddleware.Tag<PasskeyRegisterLimit>()("http/PasskeyRegisterLimit", {
  failure: declared(RateLimitedError)
}) {}

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

/** Users who proved their email address (GET /me/verified). */
export class RequireVerified extends AccessGuard<RequireVerified>()("http/RequireVerified", AccessLevel.Verified()) {}

/** Superusers only (the admin group). */
export class RequireSuperuser extends AccessGuard<RequireSuperuser>()(
  "http/RequireSuperuser",
  AccessLevel.Superuser()
) {}
