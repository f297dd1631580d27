import { Effect, Option } from "effect"
import type { PermissionName } from "../domain/Access.js"
import type { AuditEventType } from "../domain/Audit.js"
import { UserNotFoundError } from "../domain/errors.js"
import { type Email, type PublicUser, type RoleName, toPublicUser, type User, type UserId } from "../domain/User.js"
import { Audit } from "./Audit.js"
import { RoleRepo } from "./ports/RoleRepo.js"
import type { StoreUnavailableError } from "./ports/StoreUnavailableError.js"
import { Transaction } from "./ports/Transaction.js"
import { UserRepo } from "./ports/UserRepo.js"

/** How an operator names a user: by email address or by id. */
export type UserRef = { readonly email: Email } | { readonly id: UserId }

/** One page of users, and where the next one starts when there is one. */
export interface UserPage {
  readonly users: ReadonlyArray<PublicUser>
  /** The user the next page starts after, when one follows. */
  readonly nextAfter: Option.Option<UserId>
}

/** Which users to list: at most `limit`, after the user `after`, matching the email filters. */
export interface UserListing {
  readonly emailStartsWith?: string
  readonly emailContains?: string
  readonly after?: UserId
  readonly limit: number
}

/**
 * A superuser's administration of roles and permissions. Who may call it is the interface's
 * access level; every change commits with its audit entry, whose actor is the request's. All
 * changes are idempotent, and count from the affected users' next request.
 */
export class Admin extends Effect.Service<Admin>()("app/Admin", {
  effect: Effect.gen(function* () {
    const users = yield* UserRepo
    const roles = yield* RoleRepo
    const audit = yield* Audit
    const tx = yield* Transaction

    /**
     * A change of a user's roles and its entry, committed together; an unknown user is recorded
     * nothing. The entry goes first (Audit), and a user deleted between the read and the write
     * undoes it with the rest.
     */
    const changeRoles = (
      userId: UserId,
      type: AuditEventType,
      role: RoleName,
      write: Effect.Effect<Option.Option<User>, StoreUnavailableError>
    ) =>
      tx.transaction(
        Effect.gen(function* () {
          if (Option.isNone(yield* users.findById(userId))) return yield* new UserNotFoundError()
          yield* audit.append({ type, user_id: userId, details: { role } })
          const updated = yield* write
          if (Option.isNone(updated)) return yield* new UserNotFoundError()
          return toPublicUser(updated.value)
        })
      )

    /** Gives a user a role, creating the role on first use; answers the updated user. */
    const assignRole = Effect.fn("Admin.assignRole")(function* (userId: UserId, role: RoleName) {
      return yield* changeRoles(userId, "role.assigned", role, users.assignRole(userId, role))
    })

    /** Takes a role from a user; a role the user does not hold is no error. */
    const removeRole = Effect.fn("Admin.removeRole")(function* (userId: UserId, role: RoleName) {
      return yield* changeRoles(userId, "role.removed", role, users.removeRole(userId, role))
    })

    /** A change of a role's permissions and its entry, committed together, the entry first. */
    const changePermissions = (
      type: AuditEventType,
      role: RoleName,
      permission: PermissionName,
      write: Effect.Effect<void, StoreUnavailableError>
    ) => tx.transaction(Effect.zipRight(audit.append({ type, user_id: null, details: { role, permission } }), write))

    /** Grants a permission to a role, creating the role on first use. */
    const assignPermission = Effect.fn("Admin.assignPermission")(function* (
      role: RoleName,
      permission: PermissionName
    ) {
      yield* changePermissions("permission.assigned", role, permission, roles.assignPermission(role, permission))
    })

    const removePermission = Effect.fn("Admin.removePermission")(function* (
      role: RoleName,
      permission: PermissionName
    ) {
      yield* changePermissions("permission.removed", role, permission, roles.removePermission(role, permission))
    })

    /** A role's permissions in name order; an unknown role has none. */
    const rolePermissions = (role: RoleName) => roles.permissionsOf(role)

    /** Every role in use with its permissions, in name order. */
    const listRoles = roles.list

    const findUser = Effect.fn("Admin.findUser")(function* (ref: UserRef) {
      const found = yield* "email" in ref ? users.findByLogin("email", ref.email) : users.findById(ref.id)
      if (Option.isNone(found)) return yield* new UserNotFoundError()
      return found.value
    })

    /**
     * A page of users, oldest first, by keyset: after the user `after` names (UserNotFoundError if
     * it is gone). One more user than the page is asked for tells whether another page follows.
     */
    const listUsers = Effect.fn("Admin.listUsers")(function* ({ after, ...query }: UserListing) {
      const from = after === undefined ? undefined : yield* findUser({ id: after })
      const found = yield* users.list({
        ...query,
        ...(from === undefined ? {} : { after: from }),
        limit: query.limit + 1
      })
      const shown = found.slice(0, query.limit)
      const last = shown.at(-1)
      const page: UserPage = {
        users: shown.map(toPublicUser),
        nextAfter: found.length > query.limit && last !== undefined ? Option.some(last.id) : Option.none()
      }
      return page
    })

    return {
      assignRole,
      removeRole,
      assignPermission,
      removePermission,
      rolePermissions,
      listRoles,
      findUser,
      listUsers
    } as const
  })
}) {}
