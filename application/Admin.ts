import { Effect, Option } from "effect"
import type { PermissionName } from "../domain/Access.js"
import { UserNotFoundError } from "../domain/errors.js"
import { type RoleName, toPublicUser, type UserId } from "../domain/User.js"
import { RoleRepo } from "./ports/RoleRepo.js"
import { UserRepo } from "./ports/UserRepo.js"

/**
 * A superuser's administration of roles and permissions. Who may call it is the interface's
 * access level; every change is logged for the audit trail. All changes are idempotent, and
 * count from the affected users' next request.
 */
export class Admin extends Effect.Service<Admin>()("app/Admin", {
  effect: Effect.gen(function* () {
    const users = yield* UserRepo
    const roles = yield* RoleRepo

    const audit = (message: string, fields: Record<string, string>) =>
      Effect.logInfo(message).pipe(Effect.annotateLogs(fields))

    /** Gives a user a role, creating the role on first use; answers the updated user. */
    const assignRole = Effect.fn("Admin.assignRole")(function* (userId: UserId, role: RoleName) {
      const updated = yield* users.assignRole(userId, role)
      if (Option.isNone(updated)) return yield* new UserNotFoundError()
      yield* audit("role assigned", { user_id: userId, role })
      return toPublicUser(updated.value)
    })

    /** Takes a role from a user; a role the user does not hold is no error. */
    const removeRole = Effect.fn("Admin.removeRole")(function* (userId: UserId, role: RoleName) {
      const updated = yield* users.removeRole(userId, role)
      if (Option.isNone(updated)) return yield* new UserNotFoundError()
      yield* audit("role removed", { user_id: userId, role })
      return toPublicUser(updated.value)
    })

    /** Grants a permission to a role, creating the role on first use. */
    const assignPermission = Effect.fn("Admin.assignPermission")(function* (
      role: RoleName,
      permission: PermissionName
    ) {
      yield* roles.assignPermission(role, permission)
      yield* audit("permission assigned", { role, permission })
    })

    const removePermission = Effect.fn("Admin.removePermission")(function* (
      role: RoleName,
      permission: PermissionName
    ) {
      yield* roles.removePermission(role, permission)
      yield* audit("permission removed", { role, permission })
    })

    /** A role's permissions in name order; an unknown role has none. */
    const rolePermissions = (role: RoleName) => roles.permissionsOf(role)

    return { assignRole, removeRole, assignPermission, removePermission, rolePermissions } as const
  })
}) {}
