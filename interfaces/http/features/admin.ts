import { Effect } from "effect"
import { Admin } from "../../../application/Admin.js"
import { CurrentPrincipal } from "../Authentication.js"
import { feature, featureApi, shapeOf, withUseCases } from "../Feature.js"
import { adminGroup } from "../groups/admin.js"

/** Every admin change is logged with the superuser who made it. */
const byActor = <A, E, R>(change: Effect.Effect<A, E, R>) =>
  Effect.flatMap(CurrentPrincipal, (principal) => Effect.annotateLogs(change, "actor_id", principal.user.id))

/** Roles and permissions, for superusers. */
export const admin = feature({
  name: "admin",
  limits: [],
  api: (context) =>
    withUseCases(
      featureApi(adminGroup(shapeOf(context)), (handlers) =>
        Effect.gen(function* () {
          const admin = yield* Admin
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
        })
      ),
      Admin.Default
    )
})
