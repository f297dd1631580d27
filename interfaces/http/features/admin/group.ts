import * as HttpApiEndpoint from "@effect/platform/HttpApiEndpoint"
import * as HttpApiGroup from "@effect/platform/HttpApiGroup"
import * as OpenApi from "@effect/platform/OpenApi"
import { Schema } from "effect"
import { PermissionName } from "../../../../domain/Access.js"
import { AuditCursor, AuditEventType, AuditLimit, AuditPageJson, AuditUserFilter } from "../../../../domain/Audit.js"
import { StoreUnavailableError, UserNotFoundError } from "../../../../domain/errors.js"
import { isIntegerUserId, RoleName, UserId, type UserIdType } from "../../../../domain/User.js"
import { type ApiShape, Message, placed, strict } from "../../Api.js"
import { declared } from "../../problemSchemas.js"
import { RequireSuperuser } from "../../security.js"

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
  {
    identifier: "RolePermissions",
    examples: [
      {
        role: RoleName.make("editor"),
        permissions: [PermissionName.make("posts:write"), PermissionName.make("posts:publish")]
      }
    ]
  }
)

const userRoleRequest = (userIdType: UserIdType) =>
  strict({ user_id: userIdField(userIdType), role: RoleField }).annotations({ identifier: "UserRoleRequest" })
const RolePermissionRequest = strict({ role: RoleField, permission: PermissionName }).annotations({
  identifier: "RolePermissionRequest"
})

/** The audit log's filters and page, as query parameters. */
const AuditParams = Schema.Struct({
  user_id: Schema.optional(AuditUserFilter),
  type: Schema.optional(AuditEventType),
  limit: Schema.optional(AuditLimit),
  cursor: Schema.optional(AuditCursor)
})

/** Roles, permissions and the audit log, for superusers. */
export const adminGroup = (shape: ApiShape) =>
  placed(
    {
      prefix: shape.authPrefix,
      title: "Admin",
      description: "Roles, permissions and the audit log, for superusers."
    },
    HttpApiGroup.make("admin")
      .addError(declared(StoreUnavailableError))
      .add(
        HttpApiEndpoint.post("assignRole", "/admin/assign-role")
          .annotate(OpenApi.Summary, "Assign a role")
          .setPayload(userRoleRequest(shape.userIdType))
          .addSuccess(Message)
          .addError(declared(UserNotFoundError))
      )
      .add(
        HttpApiEndpoint.post("removeRole", "/admin/remove-role")
          .annotate(OpenApi.Summary, "Remove a role")
          .setPayload(userRoleRequest(shape.userIdType))
          .addSuccess(Message)
          .addError(declared(UserNotFoundError))
      )
      .add(
        HttpApiEndpoint.post("assignPermission", "/admin/assign-permission")
          .annotate(OpenApi.Summary, "Grant a permission to a role")
          .setPayload(RolePermissionRequest)
          .addSuccess(Message)
      )
      .add(
        HttpApiEndpoint.post("removePermission", "/admin/remove-permission")
          .annotate(OpenApi.Summary, "Remove a permission from a role")
          .setPayload(RolePermissionRequest)
          .addSuccess(Message)
      )
      .add(
        HttpApiEndpoint.get("rolePermissions", "/admin/roles/:role/permissions")
          .annotate(OpenApi.Summary, "A role's permissions")
          .setPath(Schema.Struct({ role: RoleField }))
          .addSuccess(RolePermissions)
      )
      .add(
        HttpApiEndpoint.get("auditEvents", "/admin/audit")
          .annotate(OpenApi.Summary, "Read the audit log")
          .annotate(
            OpenApi.Description,
            "The audit log, newest first: filter by user_id and type; pass next_cursor as cursor for the next page."
          )
          .setUrlParams(AuditParams)
          .addSuccess(AuditPageJson)
      )
      .middleware(RequireSuperuser)
  )
