import { Effect, Option } from "effect"
import { type AccessLevel, accessRefusal, needsPermissions } from "../domain/Access.js"
import { AuthorizationError } from "../domain/errors.js"
import type { User } from "../domain/User.js"
import { RoleRepo } from "./ports/RoleRepo.js"
import type { StoreUnavailableError } from "./ports/StoreUnavailableError.js"

/**
 * The permissions the user's roles grant, each once, in name order (none read for a user without
 * roles): what GET /me and the access token show. A superuser passes every check whatever this lists.
 */
export const permissionsOf =
  (roles: RoleRepo["Type"]) =>
  (user: User): Effect.Effect<ReadonlyArray<string>, StoreUnavailableError> =>
    user.roles.length === 0 ? Effect.succeed([]) : roles.permissionsOfRoles(user.roles)

/**
 * Access levels checked against the store. The user handed in is the one just loaded for this
 * request (Sessions.authenticate reads it by id, roles included), and permissions are read
 * through those roles now: a grant or a removal counts from the next request, whatever the
 * access token's informational `roles` claim says.
 */
export class AccessControl extends Effect.Service<AccessControl>()("app/AccessControl", {
  effect: Effect.gen(function* () {
    const roles = yield* RoleRepo

    /** Succeeds when the user meets the level, else fails with the reason. */
    const require = Effect.fnUntraced(function* (user: User, level: AccessLevel) {
      const permissions = needsPermissions(level, user) ? yield* roles.permissionsOfRoles(user.roles) : []
      const refusal = accessRefusal(level, user, permissions)
      if (Option.isSome(refusal)) return yield* new AuthorizationError({ message: refusal.value })
    })

    return { require, permissionsOf: permissionsOf(roles) } as const
  })
}) {}
