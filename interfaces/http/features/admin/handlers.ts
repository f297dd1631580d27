import { Effect } from "effect"
import { Admin } from "../../../../application/Admin.js"
import { Audit, RequestContext } from "../../../../application/Audit.js"
import { Actor, AUDIT_PAGE_DEFAULT } from "../../../../domain/Audit.js"
import { CurrentPrincipal } from "../../Authentication.js"
import { feature, featureApi, shapeOf } from "../../Feature.js"
import { adminGroup } from "./group.js"

/** Every admin change is logged, and recorded in the audit log, with the superuser who made it. */
const byActor = <A, E, R>(change: Effect.Effect<A, E, R>) =>
  Effect.zipWith(CurrentPrincipal, RequestContext, (principal, request) =>
    change.pipe(
      Effect.annotateLogs("actor_id", principal.user.id),
      Effect.provideService(RequestContext, { ...request, actor: Actor.superuser(principal.user.id) })
    )
  ).pipe(Effect.flatten)

/** The admin group's handlers, over the Admin use case the composition root gives them. */
export const admin = feature({
  name: "admin",
  limits: [],
  api: (context) =>
    featureApi(adminGroup(shapeOf(context)), (handlers) =>
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
    )
})
