import { Args, Command, Options } from "@effect/cli"
import { Console, Effect, Schema } from "effect"
import { Admin } from "../../application/Admin.js"
import { PermissionName } from "../../domain/Access.js"
import { RoleName } from "../../domain/User.js"
import { operate } from "./operator.js"
import { group } from "./output.js"
import { StartupError } from "./startup.js"

const nameRule = "1 to 64 letters, digits or _ . : -"

export const roleArg = Args.text({ name: "ROLE" }).pipe(Args.withDescription(`A role name: ${nameRule}`))

const permissionArg = Args.text({ name: "PERMISSION" }).pipe(
  Args.withDescription(`A permission name, e.g. posts:publish: ${nameRule}`)
)

const refused = (what: string, value: string) =>
  new StartupError({
    lines: [`${what} ${JSON.stringify(value)} is not a ${what.toLowerCase()} name; expected ${nameRule}`]
  })

export const decodeRole = (value: string) =>
  Schema.decodeUnknown(RoleName)(value).pipe(Effect.mapError(() => refused("ROLE", value)))

const decodePermission = (value: string) =>
  Schema.decodeUnknown(PermissionName)(value).pipe(Effect.mapError(() => refused("PERMISSION", value)))

/** `role grant` and `role revoke`: a role's permission given or taken, as the admin API does it (audited). */
const permissionChange = (change: "grant" | "revoke", description: string) =>
  Command.make(change, { role: roleArg, permission: permissionArg }, ({ role, permission }) =>
    Effect.gen(function* () {
      const roleName = yield* decodeRole(role)
      const permissionName = yield* decodePermission(permission)
      const permissions = yield* operate(
        Effect.gen(function* () {
          const admin = yield* Admin
          yield* change === "grant"
            ? admin.assignPermission(roleName, permissionName)
            : admin.removePermission(roleName, permissionName)
          return yield* admin.rolePermissions(roleName)
        })
      )
      yield* Console.log(JSON.stringify({ role: roleName, permissions }, null, 2))
    })
  ).pipe(Command.withDescription(description))

const list = Command.make(
  "list",
  {
    json: Options.boolean("json").pipe(Options.withDescription("Print the roles as one JSON array instead of lines."))
  },
  ({ json }) =>
    Effect.gen(function* () {
      const roles = yield* operate(Effect.flatMap(Admin, (admin) => admin.listRoles))
      if (json) return yield* Console.log(JSON.stringify(roles, null, 2))
      if (roles.length === 0) return yield* Console.log("No roles.")
      for (const { role, permissions } of roles) yield* Console.log(`${role}\t${permissions.join(",") || "-"}`)
    })
).pipe(
  Command.withDescription(
    "List every role in use (held by a user or given a permission), in name order, each with its permissions (- for none)."
  )
)

export const role = group("role", [
  permissionChange(
    "grant",
    "Grant a permission to a role (created on first use) and print the role's permissions; users holding the role have it from their next request."
  ),
  permissionChange(
    "revoke",
    "Take a permission from a role and print the role's permissions; one the role does not have is no error."
  ),
  list
]).pipe(
  Command.withDescription(
    "A role's permissions (what GET /me and the admin API's checks read); `user roles add` gives users the role."
  )
)
