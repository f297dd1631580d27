import { Context, type Effect } from "effect"
import type { PermissionName } from "../../domain/Access.js"
import type { RoleName } from "../../domain/User.js"
import type { StoreUnavailableError } from "./StoreUnavailableError.js"

/** A role and the permissions granted to it. */
export interface RoleGrants {
  readonly role: RoleName
  readonly permissions: ReadonlyArray<PermissionName>
}

/**
 * Permissions granted to roles. A role exists from its first use (assigned to a user or given
 * a permission); which users hold a role is the UserRepo's, since roles are part of the user.
 * Every operation is idempotent.
 */
export class RoleRepo extends Context.Tag("app/RoleRepo")<
  RoleRepo,
  {
    /** Grants the permission to the role, creating the role on first use. */
    readonly assignPermission: (
      role: RoleName,
      permission: PermissionName
    ) => Effect.Effect<void, StoreUnavailableError>
    readonly removePermission: (
      role: RoleName,
      permission: PermissionName
    ) => Effect.Effect<void, StoreUnavailableError>
    /** The role's permissions in name order; none for a role never used. */
    readonly permissionsOf: (role: RoleName) => Effect.Effect<ReadonlyArray<PermissionName>, StoreUnavailableError>
    /** Every role in use (held by a user or given a permission) with its permissions, both in name order. */
    readonly list: Effect.Effect<ReadonlyArray<RoleGrants>, StoreUnavailableError>
    /**
     * The permissions granted to any of these roles, each once, in name order: a user's
     * permissions, given the roles just read with the user.
     */
    readonly permissionsOfRoles: (
      roles: ReadonlyArray<string>
    ) => Effect.Effect<ReadonlyArray<PermissionName>, StoreUnavailableError>
  }
>() {}
