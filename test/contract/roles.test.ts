import * as SqlClient from "@effect/sql/SqlClient"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Option, Schema } from "effect"
import { RoleRepo } from "../../application/ports/RoleRepo.js"
import { type NewUser, UserRepo } from "../../application/ports/UserRepo.js"
import { PermissionName } from "../../domain/Access.js"
import { Email, RoleName, UserId } from "../../domain/User.js"
import * as Migrations from "../../infrastructure/sql/migrations.js"
import * as SqliteDatabase from "../../infrastructure/sql/SqliteDatabase.js"
import { loader } from "../../infrastructure/sql/schemaMigrations.js"
import { databases, quiet, sqliteWithClient } from "../support/databases.js"

const role = Schema.decodeSync(RoleName)
const permission = Schema.decodeSync(PermissionName)
const email = Schema.decodeSync(Email)

const newUser = (address: string): NewUser => ({
  email: email(address),
  hashed_password: Option.none(),
  is_active: true,
  is_verified: false,
  is_superuser: false
})

const nobody = UserId.make("0190f0c2-0000-7000-8000-00000000dead")

const found = <A>(option: Option.Option<A>): A => Option.getOrThrowWith(option, () => new Error("expected a value"))

/** Role lists compared as sets: the order users' roles come back in is not part of the contract. */
const sorted = (roles: ReadonlyArray<string>) => [...roles].sort()

for (const backend of databases) {
  const run = <A, E>(effect: Effect.Effect<A, E, UserRepo | RoleRepo>) =>
    effect.pipe(Effect.provide(backend.repositories()))

  describe.skipIf(backend.skip)(`UserRepo roles contract (${backend.name})`, () => {
    it.effect("assignRole answers the user with the role, which findById and findByLogin then show", () =>
      run(
        Effect.gen(function* () {
          const users = yield* UserRepo
          const alice = yield* users.create(newUser("alice@example.com"))
          const updated = found(yield* users.assignRole(alice.id, role("editor")))
          expect(updated.roles).toEqual(["editor"])
          expect(updated.email).toBe(alice.email)
          expect(found(yield* users.findById(alice.id)).roles).toEqual(["editor"])
          expect(found(yield* users.findByLogin("email", "alice@example.com")).roles).toEqual(["editor"])
        })
      )
    )

    it.effect("assignRole is idempotent and keeps each user's roles apart", () =>
      run(
        Effect.gen(function* () {
          const users = yield* UserRepo
          const alice = yield* users.create(newUser("alice@example.com"))
          const bob = yield* users.create(newUser("bob@example.com"))
          yield* users.assignRole(alice.id, role("editor"))
          yield* users.assignRole(alice.id, role("admin"))
          const again = found(yield* users.assignRole(alice.id, role("editor")))
          expect(sorted(again.roles)).toEqual(["admin", "editor"])
          yield* users.assignRole(bob.id, role("reader"))
          expect(sorted(found(yield* users.findById(alice.id)).roles)).toEqual(["admin", "editor"])
          expect(found(yield* users.findById(bob.id)).roles).toEqual(["reader"])
        })
      )
    )

    it.effect("removeRole takes only that role; a role not held is no error", () =>
      run(
        Effect.gen(function* () {
          const users = yield* UserRepo
          const alice = yield* users.create(newUser("alice@example.com"))
          const bob = yield* users.create(newUser("bob@example.com"))
          yield* users.assignRole(alice.id, role("editor"))
          yield* users.assignRole(alice.id, role("admin"))
          yield* users.assignRole(bob.id, role("editor"))
          expect(found(yield* users.removeRole(alice.id, role("editor"))).roles).toEqual(["admin"])
          expect(found(yield* users.removeRole(alice.id, role("never-held"))).roles).toEqual(["admin"])
          expect(found(yield* users.findById(alice.id)).roles).toEqual(["admin"])
          expect(found(yield* users.findById(bob.id)).roles).toEqual(["editor"])
          expect(found(yield* users.removeRole(alice.id, role("admin"))).roles).toEqual([])
        })
      )
    )

    it.effect("assignRole and removeRole answer none for an unknown user and give nobody the role", () =>
      run(
        Effect.gen(function* () {
          const users = yield* UserRepo
          const alice = yield* users.create(newUser("alice@example.com"))
          expect(yield* users.assignRole(nobody, role("editor"))).toEqual(Option.none())
          expect(yield* users.removeRole(nobody, role("editor"))).toEqual(Option.none())
          expect(found(yield* users.findById(alice.id)).roles).toEqual([])
        })
      )
    )

    it.effect("a deleted user's roles go with it; a new user with the same address starts without them", () =>
      run(
        Effect.gen(function* () {
          const users = yield* UserRepo
          const alice = yield* users.create(newUser("alice@example.com"))
          yield* users.assignRole(alice.id, role("editor"))
          yield* users.delete(alice.id)
          expect(yield* users.assignRole(alice.id, role("admin"))).toEqual(Option.none())
          const again = yield* users.create(newUser("alice@example.com"))
          expect(found(yield* users.findById(again.id)).roles).toEqual([])
        })
      )
    )
  })

  describe.skipIf(backend.skip)(`RoleRepo contract (${backend.name})`, () => {
    it.effect("assignPermission grants it once; permissionsOf lists a role's permissions in name order", () =>
      run(
        Effect.gen(function* () {
          const roles = yield* RoleRepo
          yield* roles.assignPermission(role("editor"), permission("posts:write"))
          yield* roles.assignPermission(role("editor"), permission("posts:delete"))
          yield* roles.assignPermission(role("editor"), permission("posts:write"))
          yield* roles.assignPermission(role("reader"), permission("posts:read"))
          expect(yield* roles.permissionsOf(role("editor"))).toEqual(["posts:delete", "posts:write"])
          expect(yield* roles.permissionsOf(role("reader"))).toEqual(["posts:read"])
        })
      )
    )

    it.effect(
      "list answers every role in use, a user's without permissions too, each with its permissions, in name order",
      () =>
        run(
          Effect.gen(function* () {
            const roles = yield* RoleRepo
            const users = yield* UserRepo
            expect(yield* roles.list).toEqual([])
            yield* roles.assignPermission(role("editor"), permission("posts:write"))
            yield* roles.assignPermission(role("editor"), permission("posts:delete"))
            yield* roles.assignPermission(role("admin"), permission("users:ban"))
            const ada = yield* users.create(newUser("ada@example.com"))
            yield* users.assignRole(ada.id, role("support"))
            yield* roles.removePermission(role("admin"), permission("users:ban"))
            expect(yield* roles.list).toEqual([
              { role: "admin", permissions: [] },
              { role: "editor", permissions: ["posts:delete", "posts:write"] },
              { role: "support", permissions: [] }
            ])
          })
        )
    )

    it.effect("an unknown role has no permissions", () =>
      run(
        Effect.gen(function* () {
          const roles = yield* RoleRepo
          expect(yield* roles.permissionsOf(role("never-used"))).toEqual([])
        })
      )
    )

    it.effect("removePermission takes only that grant; one never made is no error", () =>
      run(
        Effect.gen(function* () {
          const roles = yield* RoleRepo
          yield* roles.assignPermission(role("editor"), permission("posts:write"))
          yield* roles.assignPermission(role("editor"), permission("posts:delete"))
          yield* roles.assignPermission(role("admin"), permission("posts:write"))
          yield* roles.removePermission(role("editor"), permission("posts:write"))
          yield* roles.removePermission(role("editor"), permission("never:granted"))
          yield* roles.removePermission(role("never-used"), permission("posts:write"))
          expect(yield* roles.permissionsOf(role("editor"))).toEqual(["posts:delete"])
          expect(yield* roles.permissionsOf(role("admin"))).toEqual(["posts:write"])
        })
      )
    )

    it.effect("permissionsOfRoles answers the permissions of any of the roles, each once, in name order", () =>
      run(
        Effect.gen(function* () {
          const roles = yield* RoleRepo
          yield* roles.assignPermission(role("editor"), permission("posts:write"))
          yield* roles.assignPermission(role("editor"), permission("posts:read"))
          yield* roles.assignPermission(role("reader"), permission("posts:read"))
          yield* roles.assignPermission(role("admin"), permission("users:ban"))
          expect(yield* roles.permissionsOfRoles(["reader", "editor"])).toEqual(["posts:read", "posts:write"])
          expect(yield* roles.permissionsOfRoles(["reader", "never-used"])).toEqual(["posts:read"])
          expect(yield* roles.permissionsOfRoles([])).toEqual([])
          expect(yield* roles.permissionsOfRoles(["never-used"])).toEqual([])
        })
      )
    )

    it.effect("a user's permissions follow their roles: through the roles read with the user", () =>
      run(
        Effect.gen(function* () {
          const users = yield* UserRepo
          const roles = yield* RoleRepo
          const alice = yield* users.create(newUser("alice@example.com"))
          yield* roles.assignPermission(role("editor"), permission("posts:write"))
          const permissionsOfAlice = Effect.flatMap(users.findById(alice.id), (user) =>
            roles.permissionsOfRoles(found(user).roles)
          )
          expect(yield* permissionsOfAlice).toEqual([])
          yield* users.assignRole(alice.id, role("editor"))
          expect(yield* permissionsOfAlice).toEqual(["posts:write"])
          yield* roles.assignPermission(role("editor"), permission("posts:delete"))
          expect(yield* permissionsOfAlice).toEqual(["posts:delete", "posts:write"])
          yield* users.removeRole(alice.id, role("editor"))
          expect(yield* permissionsOfAlice).toEqual([])
        })
      )
    )
  })
}

describe("SQLite role tables only", () => {
  const run = <A, E>(effect: Effect.Effect<A, E, UserRepo | RoleRepo | SqlClient.SqlClient>) =>
    effect.pipe(Effect.provide(sqliteWithClient()))

  const names = (query: "roles" | "user_roles" | "role_permissions") =>
    Effect.gen(function* () {
      const sql = yield* SqlClient.SqlClient
      const column = query === "role_permissions" ? "role || '=' || permission" : query === "roles" ? "name" : "role"
      const rows = yield* sql<{ readonly name: string }>`SELECT ${sql.literal(column)} AS name FROM ${sql(query)}`
      return rows.map((row) => row.name).sort()
    })

  it.effect("a role is created on first use, by a user or by a permission, and only once", () =>
    run(
      Effect.gen(function* () {
        const users = yield* UserRepo
        const roles = yield* RoleRepo
        const alice = yield* users.create(newUser("alice@example.com"))
        const bob = yield* users.create(newUser("bob@example.com"))
        yield* users.assignRole(alice.id, role("editor"))
        yield* users.assignRole(bob.id, role("editor"))
        yield* roles.assignPermission(role("editor"), permission("posts:write"))
        yield* roles.assignPermission(role("auditor"), permission("logs:read"))
        expect(yield* names("roles")).toEqual(["auditor", "editor"])
        expect(yield* names("role_permissions")).toEqual(["auditor=logs:read", "editor=posts:write"])
      })
    )
  )

  it.effect("assigning a role to an unknown user creates neither the role nor a row", () =>
    run(
      Effect.gen(function* () {
        const users = yield* UserRepo
        yield* users.assignRole(nobody, role("ghost"))
        expect(yield* names("roles")).toEqual([])
        expect(yield* names("user_roles")).toEqual([])
      })
    )
  )

  it.effect("deleting a user deletes its role rows, and keeps the role and its permissions", () =>
    run(
      Effect.gen(function* () {
        const users = yield* UserRepo
        const roles = yield* RoleRepo
        const alice = yield* users.create(newUser("alice@example.com"))
        yield* users.assignRole(alice.id, role("editor"))
        yield* roles.assignPermission(role("editor"), permission("posts:write"))
        yield* users.delete(alice.id)
        expect(yield* names("user_roles")).toEqual([])
        expect(yield* names("roles")).toEqual(["editor"])
        expect(yield* roles.permissionsOf(role("editor"))).toEqual(["posts:write"])
      })
    )
  )

  it.effect("migration 0002 registers the roles users already held", () =>
    Effect.gen(function* () {
      const sql = yield* SqlClient.SqlClient
      yield* sql`PRAGMA foreign_keys = ON`
      const first = Effect.map(loader, (all) => all.filter(([id]) => id === 1))
      yield* Migrations.migrate(first)
      yield* sql`INSERT INTO users (id, email, created_at) VALUES ('u1', 'a@example.com', 0), ('u2', 'b@example.com', 0)`
      yield* sql`INSERT INTO user_roles (user_id, role) VALUES ('u1', 'editor'), ('u2', 'editor'), ('u2', 'admin')`
      const second = Effect.map(loader, (all) => all.filter(([id]) => id <= 2))
      const applied = yield* Migrations.migrate(second)
      expect(applied.map(([id, name]) => `${id}_${name}`)).toEqual(["2_role_permissions"])
      const rows = yield* sql<{ readonly name: string }>`SELECT name FROM roles ORDER BY name`
      expect(rows.map((row) => row.name)).toEqual(["admin", "editor"])
    }).pipe(Effect.provide(SqliteDatabase.client(":memory:")), Effect.provide(quiet))
  )
})
