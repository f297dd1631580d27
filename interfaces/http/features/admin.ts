import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "@effect/platform"
import { Effect, Schema } from "effect"
import { Admin } from "../../../application/Admin.js"
import { Audit, RequestContext } from "../../../application/Audit.js"
import { PermissionName } from "../../../domain/Access.js"
import {
  Actor,
  AUDIT_PAGE_DEFAULT,
  AuditCursor,
  AuditEventType,
  AuditLimit,
  AuditPageJson,
  AuditUserFilter
} from "../../../domain/Audit.js"
import { UserNotFoundError } from "../../../domain/errors.js"
import { isIntegerUserId, RoleName, UserId, type UserIdType } from "../../../domain/User.js"
import { RequireSuperuser } from "../AccessLevels.js"
import { featureApi, Message, strict, withUseCases } from "../Api.js"
import { CurrentPrincipal } from "../Authentication.js"
import { feature } from "../Feature.js"
import { declared } from "../problems.js"

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
  userIdType === "integer" ? IntegerUserIdField : userIdType === "string" ? StringUserIdField : UuidUserIdField

export const RolePermissions = Schema.Struct({ role: RoleName, permissions: Schema.Array(PermissionName) }).annotations(
  { identifier: "RolePermissions" }
)

const userRoleRequest = (userIdType: UserIdType) =>
  strict({ user_id: userIdField(userIdType), role: RoleField }).annotations({ identifier: "UserRoleRequest" })
const RolePermissionRequest = strict({ role: RoleField, permission: PermissionName }).annotations({
  identifier: "RolePermissionRequest"
})

/** Every admin change is logged, and recorded in the audit log, with the superuser who made it. */
const byActor = <A, E, R>(change: Effect.Effect<A, E, R>) =>
  Effect.zipWith(CurrentPrincipal, RequestContext, (principal, request) =>
    change.pipe(
      Effect.annotateLogs("actor_id", principal.user.id),
      Effect.provideService(RequestContext, { ...request, actor: Actor.superuser(principal.user.id) })
    )
  ).pipe(Effect.flatten)

/** The audit log's filters and page, as query parameters. */
const AuditParams = Schema.Struct({
  user_id: Schema.optional(AuditUserFilter),
  type: Schema.optional(AuditEventType),
  limit: Schema.optional(AuditLimit),
  cursor: Schema.optional(AuditCursor)
})

/** Roles, permissions and the audit log, for superusers. */
export const admin = feature({
  name: "admin",
  limits: [],
  api: ({ settings }) =>
    withUseCases(
      featureApi(
        {
          prefix: settings.server.authPrefix,
          title: "Admin",
          description: "Roles, permissions and the audit log, for superusers."
        },
        HttpApiGroup.make("admin")
          .add(
            HttpApiEndpoint.post("assignRole", "/admin/assign-role")
              .setPayload(userRoleRequest(settings.storage.userIdType))
              .addSuccess(Message)
              .addError(declared(UserNotFoundError))
          )
          .add(
            HttpApiEndpoint.post("removeRole", "/admin/remove-role")
              .setPayload(userRoleRequest(settings.storage.userIdType))
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
          .add(
            HttpApiEndpoint.get("auditEvents", "/admin/audit")
              .setUrlParams(AuditParams)
              .addSuccess(AuditPageJson)
              .annotate(
                OpenApi.Description,
                "The audit log, newest first: filter by user_id and type; pass next_cursor as cursor for the next page."
              )
          )
          .middleware(RequireSuperuser),
        (handlers) =>
          Effect.gen(function* () {
            const admin = yield* Admin
            const audit = yield* Audit
            return handlers
              .handle("assignRole", ({ payload }) =>
                byActor(admin.assignRole(payload.user_id, payload.role)).pipe(
                  Effect.as({ detail: `The role ${payload.role} has been assigned.` })
                )
              )
              .handle("removeRole", ({ payload }) =>
                byActor(admin.removeRole(payload.user_id, payload.role)).pipe(
                  Effect.as({ detail: `The role ${payload.role} has been removed.` })
                )
              )
              .handle("assignPermission", ({ payload }) =>
                byActor(admin.assignPermission(payload.role, payload.permission)).pipe(
                  Effect.as({ detail: `The permission ${payload.permission} has been granted to ${payload.role}.` })
                )
              )
              .handle("removePermission", ({ payload }) =>
                byActor(admin.removePermission(payload.role, payload.permission)).pipe(
                  Effect.as({ detail: `The permission ${payload.permission} has been removed from ${payload.role}.` })
                )
              )
              .handle("rolePermissions", ({ path }) =>
                Effect.map(admin.rolePermissions(path.role), (permissions) => ({ role: path.role, permissions }))
              )
              .handle("auditEvents", ({ urlParams }) =>
                audit.list({
                  user_id: urlParams.user_id,
                  type: urlParams.type,
                  before: urlParams.cursor,
                  limit: urlParams.limit ?? AUDIT_PAGE_DEFAULT
                })
              )
          })
      ),
      Admin.Default
    )
})
