import * as SqlClient from "@effect/sql/SqlClient"
import { Effect, Layer, Schema } from "effect"
import { type RoleGrants, RoleRepo } from "../../application/ports/RoleRepo.js"
import { PermissionName } from "../../domain/Access.js"
import { RoleName } from "../../domain/User.js"
import { unavailable } from "./failures.js"

const decodePermissions = Schema.decodeUnknown(Schema.Array(Schema.Struct({ permission: PermissionName })))
const decodeGrants = Schema.decodeUnknown(
  Schema.Array(Schema.Struct({ role: RoleName, permission: Schema.NullOr(PermissionName) }))
)
const names = (rows: ReadonlyArray<{ readonly permission: PermissionName }>) => rows.map((row) => row.permission)

export const make = Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  return RoleRepo.of({
    assignPermission: (role, permission) =>
      Effect.gen(function* () {
        yield* sql`INSERT INTO roles (name) VALUES (${role}) ON CONFLICT DO NOTHING`
        yield* sql`INSERT INTO role_permissions (role, permission) VALUES (${role}, ${permission})
          ON CONFLICT DO NOTHING`
      }).pipe(unavailable),
    removePermission: (role, permission) =>
      sql`DELETE FROM role_permissions WHERE role = ${role} AND permission = ${permission}`.pipe(
        Effect.asVoid,
        unavailable
      ),
    permissionsOf: (role) =>
      sql`SELECT permission FROM role_permissions WHERE role = ${role} ORDER BY permission`.pipe(
        Effect.flatMap(decodePermissions),
        Effect.map(names),
        unavailable
      ),
    list: sql`SELECT r.name AS role, p.permission FROM roles r LEFT JOIN role_permissions p ON p.role = r.name
      ORDER BY r.name, p.permission`.pipe(
      Effect.flatMap(decodeGrants),
      Effect.map((rows) => {
        const grants: Array<{ role: RoleName; permissions: Array<PermissionName> }> = []
        for (const row of rows) {
          if (grants.at(-1)?.role !== row.role) grants.push({ role: row.role, permissions: [] })
          if (row.permission !== null) grants.at(-1)?.permissions.push(row.permission)
        }
        return grants as ReadonlyArray<RoleGrants>
      }),
      unavailable
    ),
    permissionsOfRoles: (roles) =>
      roles.length === 0
        ? Effect.succeed([])
        : sql`SELECT DISTINCT permission FROM role_permissions WHERE ${sql.in("role", roles)}
            ORDER BY permission`.pipe(Effect.flatMap(decodePermissions), Effect.map(names), unavailable)
  })
})

export const layer = Layer.effect(RoleRepo, make)
