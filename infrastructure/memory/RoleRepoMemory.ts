import { Effect, Layer } from "effect"
import { RoleRepo } from "../../application/ports/RoleRepo.js"
import type { PermissionName } from "../../domain/Access.js"
import type { RoleName } from "../../domain/User.js"

const inNameOrder = (names: Iterable<PermissionName>) => [...names].sort()

/** Role grants in a Map, for tests and throwaway runs. */
export const make = Effect.sync(() => {
  const grants = new Map<RoleName, Set<PermissionName>>()
  return RoleRepo.of({
    assignPermission: (role, permission) =>
      Effect.sync(() => {
        const held = grants.get(role) ?? new Set()
        grants.set(role, held.add(permission))
      }),
    removePermission: (role, permission) => Effect.sync(() => void grants.get(role)?.delete(permission)),
    permissionsOf: (role) => Effect.sync(() => inNameOrder(grants.get(role) ?? [])),
    permissionsOfRoles: (roles) =>
      Effect.sync(() => inNameOrder(new Set(roles.flatMap((role) => [...(grants.get(role as RoleName) ?? [])]))))
  })
})

export const layer = Layer.effect(RoleRepo, make)
