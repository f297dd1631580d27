import { HttpApi, HttpApiEndpoint, HttpApiGroup, HttpApiSchema, OpenApi } from "@effect/platform"
import { type Redacted, Schema } from "effect"
import { StoreUnavailableError } from "../../application/ports/StoreUnavailableError.js"
import { type Deployment, exposedGroups, profileRules } from "../../config/Deployment.js"
import { PermissionName } from "../../domain/Access.js"
import {
  AccountLockedError,
  AuthenticationError,
  InvalidPasswordError,
  ReauthenticationError,
  SessionNotFoundError,
  TokenBlacklistedError,
  TokenError,
  TokenExpiredError,
  UserAlreadyExistsError,
  UserNotFoundError,
  ValidationError
} from "../../domain/errors.js"
import { FamilyId, SessionInfo } from "../../domain/Session.js"
import { LoginResponse, TokenPair } from "../../domain/Token.js"
import { Email, isIntegerUserId, PublicUser, RoleName, UserId, type UserIdType } from "../../domain/User.js"
import { RequireSuperuser, RequireVerified } from "./AccessLevels.js"
import { Authentication } from "./Authentication.js"
import { CsrfError } from "./cookies.js"
import { documentValidationProblems } from "./openapi.js"
import { declared } from "./problems.js"

/** A request body that refuses fields it does not declare. */
const strict = <Fields extends Schema.Struct.Fields>(fields: Fields) =>
  Schema.Struct(fields).annotations({ parseOptions: { onExcessProperty: "error" } })

/** Passwords on the wire: redacted at once; the policy judges them, this only bounds them. */
const PasswordField = Schema.Redacted(Schema.String.pipe(Schema.maxLength(4096)))

export const Message = Schema.Struct({ detail: Schema.String }).annotations({ identifier: "Message" })
export type Message = typeof Message.Type

export const Credentials = Schema.Struct({ identifier: Schema.String, password: PasswordField })

/**
 * The login body names its identifier after LOGIN_FIELD (`email` by default), so its schema is
 * built from the setting; use cases only ever see `identifier`.
 */
const loginPayload = (loginField: string) => {
  const fields: Record<string, Schema.Schema<string>> = {
    [loginField]: Schema.String.pipe(Schema.minLength(1), Schema.maxLength(320)),
    password: Schema.String.pipe(Schema.maxLength(4096))
  }
  const wire = Schema.Struct(fields).annotations({
    identifier: "LoginRequest",
    parseOptions: { onExcessProperty: "error" }
  })
  return Schema.transform(wire, Credentials, {
    strict: false,
    decode: (body) => ({ identifier: body[loginField] ?? "", password: body.password ?? "" }),
    encode: (credentials) => ({ [loginField]: credentials.identifier, password: credentials.password })
  })
}

const RefreshRequest = strict({ refresh_token: Schema.String }).annotations({ identifier: "RefreshRequest" })

/** Cookie mode: the refresh token may travel in the cookie, so the body may be `{}` or absent (null). */
const CookieRefreshRequest = Schema.NullOr(
  strict({ refresh_token: Schema.optional(Schema.String) }).annotations({ identifier: "CookieRefreshRequest" })
)

/**
 * The refresh body of the deployment's transport. Both share the cookie mode's type, which the
 * bearer schema only narrows (a required token), so the handler is the same for both.
 */
const refreshPayload = (tokenTransport: "bearer" | "cookie") =>
  (tokenTransport === "cookie" ? CookieRefreshRequest : RefreshRequest) as typeof CookieRefreshRequest

/** The registration body: email, password and the deployment's registration fields. */
export interface RegisterRequest {
  readonly email: Email
  readonly password: Redacted.Redacted<string>
  readonly [field: string]: unknown
}

/**
 * The register body is built from the deployment at start-up, like the login body from
 * LOGIN_FIELD, so OpenAPI documents its extra fields; anything else is still refused.
 */
const registerPayload = (loginField: string, deployment: Deployment) => {
  const rules = profileRules(loginField, deployment)
  const extra: Record<string, Schema.Schema.All | Schema.PropertySignature.All> = {}
  for (const name of rules.registrationFields ?? []) {
    const schema = rules.schemas?.get(name)
    if (schema === undefined) continue
    extra[name] = rules.requiredFields?.has(name) ? schema : Schema.optionalWith(schema, { exact: true })
  }
  return strict({ ...extra, email: Email, password: PasswordField }).annotations({
    identifier: "RegisterRequest"
  }) as unknown as Schema.Schema<RegisterRequest, { readonly email: string; readonly password: string }>
}

/**
 * The PATCH /me body: the deployment's editable fields, each checked by its schema (a bad value
 * is a 422 naming it), documented in OpenAPI. Other names pass to the use case, which refuses
 * protected and unknown fields by name.
 */
const profilePatchPayload = (loginField: string, deployment: Deployment) => {
  const rules = profileRules(loginField, deployment)
  const editable: Record<string, Schema.PropertySignature.All> = {}
  for (const name of rules.editableFields) {
    const schema = rules.schemas?.get(name)
    if (schema !== undefined) editable[name] = Schema.optionalWith(schema, { exact: true })
  }
  return Schema.Struct(editable, Schema.Record({ key: Schema.String, value: Schema.Unknown })).annotations({
    identifier: "ProfilePatch",
    description: "The deployment's custom profile fields to change. Protected and unknown fields are refused."
  }) as unknown as Schema.Schema<Readonly<Record<string, unknown>>, Readonly<Record<string, unknown>>>
}

const authGroup = (loginField: string, tokenTransport: "bearer" | "cookie" = "bearer", deployment: Deployment = {}) =>
  HttpApiGroup.make("auth")
    .add(
      HttpApiEndpoint.post("register", "/register")
        .setPayload(registerPayload(loginField, deployment))
        .addSuccess(PublicUser, { status: 201 })
        .addSuccess(Message, { status: 202 })
        .addError(declared(InvalidPasswordError))
        .addError(declared(UserAlreadyExistsError))
    )
    .add(
      HttpApiEndpoint.post("login", "/login")
        .setPayload(loginPayload(loginField))
        .addSuccess(LoginResponse)
        .addError(declared(AuthenticationError))
        .addError(declared(AccountLockedError))
    )
    .add(
      HttpApiEndpoint.post("refresh", "/refresh")
        .setPayload(refreshPayload(tokenTransport))
        .addSuccess(TokenPair)
        .addError(declared(TokenError))
        .addError(declared(TokenExpiredError))
        .addError(declared(TokenBlacklistedError))
        .addError(declared(CsrfError))
        .annotate(
          OpenApi.Description,
          tokenTransport === "cookie"
            ? "Rotates the refresh token of the portcullis_refresh cookie (which wins over a body token); the X-CSRF-Token header must echo the portcullis_csrf cookie, else 403 CsrfError. Both cookies are renewed and refresh_token is null."
            : "Rotates the refresh token given in the body."
        )
    )
    .add(HttpApiEndpoint.post("logout", "/logout").addSuccess(HttpApiSchema.NoContent).middleware(Authentication))
    .annotate(OpenApi.Title, "Auth")
    .annotate(OpenApi.Description, "Registration, password sign-in, token refresh and sign-out.")

const profileGroup = (loginField: string, deployment: Deployment = {}) =>
  HttpApiGroup.make("profile")
    .add(HttpApiEndpoint.get("me", "/me").addSuccess(PublicUser))
    .add(HttpApiEndpoint.get("verifiedMe", "/me/verified").addSuccess(PublicUser).middleware(RequireVerified))
    .add(
      HttpApiEndpoint.patch("updateMe", "/me")
        .setPayload(profilePatchPayload(loginField, deployment))
        .addSuccess(PublicUser)
        .addError(declared(UserAlreadyExistsError))
    )
    .add(HttpApiEndpoint.del("deleteMe", "/me").addSuccess(HttpApiSchema.NoContent))
    .add(
      HttpApiEndpoint.post("changePassword", "/change-password")
        .setPayload(
          strict({ current_password: Schema.optional(PasswordField), new_password: PasswordField }).annotations({
            identifier: "ChangePasswordRequest"
          })
        )
        .addSuccess(Message)
        .addError(declared(ReauthenticationError))
        .addError(declared(InvalidPasswordError))
    )
    .middleware(Authentication)
    .annotate(OpenApi.Title, "Profile")
    .annotate(OpenApi.Description, "The signed-in user's own account.")

const TokenBody = (identifier: string) => strict({ token: Schema.String }).annotations({ identifier })

const verifyGroup = HttpApiGroup.make("verify")
  .add(
    HttpApiEndpoint.post("requestVerification", "/verify-email/request")
      .addSuccess(Message, { status: 202 })
      .middleware(Authentication)
  )
  .add(
    HttpApiEndpoint.post("confirmVerification", "/verify-email/confirm")
      .setPayload(TokenBody("VerifyEmailConfirmRequest"))
      .addSuccess(Message)
      .addError(declared(TokenError))
      .addError(declared(TokenExpiredError))
      .addError(declared(TokenBlacklistedError))
  )
  .add(
    HttpApiEndpoint.post("requestPasswordReset", "/password-reset/request")
      .setPayload(strict({ email: Email }).annotations({ identifier: "PasswordResetRequest" }))
      .addSuccess(Message, { status: 202 })
  )
  .add(
    HttpApiEndpoint.post("confirmPasswordReset", "/password-reset/confirm")
      .setPayload(
        strict({ token: Schema.String, new_password: PasswordField }).annotations({
          identifier: "PasswordResetConfirmRequest"
        })
      )
      .addSuccess(Message)
      .addError(declared(TokenError))
      .addError(declared(TokenExpiredError))
      .addError(declared(TokenBlacklistedError))
      .addError(declared(InvalidPasswordError))
  )
  .annotate(OpenApi.Title, "Verify")
  .annotate(OpenApi.Description, "Email verification and password reset by mailed, single-use tokens.")
export const RevokedSessions = Schema.Struct({
  detail: Schema.String,
  revoked: Schema.Int.annotations({ description: "How many sessions were ended." })
}).annotations({ identifier: "RevokedSessions" })

const sessionsGroup = HttpApiGroup.make("sessions")
  .add(HttpApiEndpoint.get("list", "/sessions").addSuccess(Schema.Array(SessionInfo)))
  .add(
    HttpApiEndpoint.del("revoke", "/sessions/:family_id")
      .setPath(Schema.Struct({ family_id: FamilyId }))
      .addSuccess(HttpApiSchema.NoContent)
      .addError(declared(SessionNotFoundError))
  )
  .add(HttpApiEndpoint.post("revokeOthers", "/sessions/revoke-others").addSuccess(RevokedSessions))
  .middleware(Authentication)
  .annotate(OpenApi.Title, "Sessions")
  .annotate(
    OpenApi.Description,
    "The signed-in user's live sessions (one per sign-in, across refreshes): list them, end one, end all the others."
  )
/** Role and permission names on the wire. */
const RoleField = RoleName.annotations({ description: "A role name: 1 to 64 letters, digits or _ . : -" })

/** A user id in the deployment's id type: a UUID (accepted in any letter case). */
const UuidUserIdField = Schema.compose(Schema.Lowercase, Schema.UUID).pipe(
  Schema.compose(UserId),
  Schema.annotations({ jsonSchema: { type: "string", format: "uuid", description: "The user's id." } })
)

/** USER_ID_TYPE=integer: a positive integer, as a JSON number or a numeric string. */
const IntegerUserIdField = Schema.transform(
  Schema.Union(
    Schema.Int.pipe(Schema.between(1, Number.MAX_SAFE_INTEGER)),
    Schema.String.pipe(Schema.filter(isIntegerUserId, { message: () => "must be a positive integer" }))
  ),
  UserId,
  { strict: true, decode: (wire) => String(wire), encode: (id) => id }
).annotations({
  jsonSchema: {
    anyOf: [
      { type: "integer", minimum: 1 },
      { type: "string", pattern: "^[1-9][0-9]*$" }
    ]
  },
  description: "The user's id."
})

/** USER_ID_TYPE=string: the opaque, URL-safe id the service made. */
const StringUserIdField = Schema.String.pipe(
  Schema.pattern(/^[A-Za-z0-9_-]{1,128}$/, { message: () => "must be a user id" }),
  Schema.compose(UserId),
  Schema.annotations({ description: "The user's id." })
)

const userIdField = (userIdType: UserIdType) =>
  (userIdType === "integer"
    ? IntegerUserIdField
    : userIdType === "string"
      ? StringUserIdField
      : UuidUserIdField) as Schema.Schema<UserId, string>

export const RolePermissions = Schema.Struct({ role: RoleName, permissions: Schema.Array(PermissionName) }).annotations(
  { identifier: "RolePermissions" }
)

const userRoleRequest = (userIdType: UserIdType) =>
  strict({ user_id: userIdField(userIdType), role: RoleField }).annotations({ identifier: "UserRoleRequest" })
const RolePermissionRequest = strict({ role: RoleField, permission: PermissionName }).annotations({
  identifier: "RolePermissionRequest"
})

const adminGroup = (userIdType: UserIdType = "uuid") =>
  HttpApiGroup.make("admin")
    .add(
      HttpApiEndpoint.post("assignRole", "/admin/assign-role")
        .setPayload(userRoleRequest(userIdType))
        .addSuccess(Message)
        .addError(declared(UserNotFoundError))
    )
    .add(
      HttpApiEndpoint.post("removeRole", "/admin/remove-role")
        .setPayload(userRoleRequest(userIdType))
        .addSuccess(Message)
        .addError(declared(UserNotFoundError))
    )
    .add(
      HttpApiEndpoint.post("assignPermission", "/admin/assign-permission")
        .setPayload(RolePermissionRequest)
        .addSuccess(Message)
    )
    .add(
      HttpApiEndpoint.post("removePermission", "/admin/remove-permission")
        .setPayload(RolePermissionRequest)
        .addSuccess(Message)
    )
    .add(
      HttpApiEndpoint.get("rolePermissions", "/admin/roles/:role/permissions")
        .setPath(Schema.Struct({ role: RoleField }))
        .addSuccess(RolePermissions)
    )
    .middleware(RequireSuperuser)
    .annotate(OpenApi.Title, "Admin")
    .annotate(OpenApi.Description, "Roles and permissions, for superusers.")

const healthGroup = HttpApiGroup.make("health")
  .add(HttpApiEndpoint.get("healthz", "/healthz").addSuccess(Schema.Struct({ status: Schema.Literal("ok") })))
  .add(
    HttpApiEndpoint.get("readyz", "/readyz")
      .addSuccess(Schema.Struct({ status: Schema.Literal("ready") }))
      .annotate(OpenApi.Description, "200 when the database and the revocation store answer; 503 problem otherwise.")
  )
  .annotate(OpenApi.Title, "Health")
  .annotate(OpenApi.Description, "Liveness (/healthz: the process answers) and readiness (/readyz: its stores answer).")

export interface ApiOptions {
  readonly authPrefix: string
  readonly loginField: string
  /** Cookie mode changes the refresh body (optional token); bearer when absent. */
  readonly tokenTransport?: "bearer" | "cookie"
  /** Custom fields shape the register and PATCH /me bodies; route groups may be left out. */
  readonly deployment?: Deployment
  /** The form of admin `user_id` fields (USER_ID_TYPE); uuid when absent. */
  readonly userIdType?: UserIdType
}

/**
 * The whole HTTP contract. Built from settings: the prefix the auth routes live under, the
 * login field and the token transport; /healthz stays at the root for load balancers.
 */
export const makeApi = (options: ApiOptions) => {
  const deployment = options.deployment ?? {}
  const auth = authGroup(options.loginField, options.tokenTransport, deployment)
  const profile = profileGroup(options.loginField, deployment)
  const admin = adminGroup(options.userIdType)
  const all = HttpApi.make("portcullis").add(auth).add(profile).add(verifyGroup).add(sessionsGroup).add(admin)
  // The type keeps every group, so handlers are written once; a group the deployment leaves out
  // is not in the API at all (its routes are 404 and undocumented) and gets no handlers.
  const exposed = exposedGroups(deployment)
  let routes = HttpApi.make("portcullis").add(auth) as unknown as typeof all
  for (const group of [profile, verifyGroup, sessionsGroup, admin]) {
    if (exposed.has(group.identifier)) routes = routes.add(group) as unknown as typeof all
  }
  return (options.authPrefix === "" ? routes : routes.prefix(options.authPrefix as HttpApiEndpoint.PathSegment))
    .add(healthGroup)
    .addError(declared(ValidationError))
    .addError(declared(StoreUnavailableError))
    .annotate(OpenApi.Title, "Portcullis")
    .annotate(OpenApi.Description, "Authentication and account service.")
    .annotate(OpenApi.Transform, documentValidationProblems)
}

export type PortcullisApi = ReturnType<typeof makeApi>
