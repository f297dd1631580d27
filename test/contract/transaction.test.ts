import * as SqlClient from "@effect/sql/SqlClient"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer, Redacted, Schema } from "effect"
import { AuditLog } from "../../application/ports/AuditLog.js"
import { RoleRepo } from "../../application/ports/RoleRepo.js"
import { Transaction } from "../../application/ports/Transaction.js"
import { memoryRepositories, sqlRepositories } from "../../composition/stores.js"
import { PermissionName } from "../../domain/Access.js"
import type { AuditEntry } from "../../domain/Audit.js"
import { RoleName } from "../../domain/User.js"
import * as PgDatabase from "../../infrastructure/sql/PgDatabase.js"
import { quiet, sqliteFileWithClient, sqliteWithClient } from "../support/databases.js"
import * as Postgres from "../support/postgres.js"
import { privatePostgres, privatePostgresPossible } from "../support/privatePostgres.js"
import { auditEntry } from "../support/sessionRecords.js"

const role = Schema.decodeSync(RoleName)("auditors")
const permission = (name: string) => Schema.decodeSync(PermissionName)(`audit:${name}`)
const granted = (name: string) => auditEntry("permission.assigned", null, 1_000, { permission: name })

type Ports = Transaction | RoleRepo | AuditLog

/** A store the suite runs against, with its client, for what only the database itself can break. */
interface Store {
  readonly name: string
  readonly skip: boolean
  readonly layer: () => Layer.Layer<Ports | SqlClient.SqlClient, unknown>
}

const stores: ReadonlyArray<Store> = [
  // The memory store is SQLite in memory: its transactions are SQLite's (docs/contributing.md).
  { name: "memory", skip: false, layer: () => memoryRepositories() },
  { name: "sqlite", skip: false, layer: () => sqliteWithClient() },
  { name: "sqlite file", skip: false, layer: () => sqliteFileWithClient() },
  {
    name: "postgresql",
    skip: Postgres.noPostgres,
    layer: () => sqlRepositories().pipe(Layer.provideMerge(Postgres.layer()))
  }
]

/** What the work committed: the role's permissions and the log's entries, oldest first. */
const committed = Effect.gen(function* () {
  const permissions = yield* (yield* RoleRepo).permissionsOf(role)
  const entries = yield* (yield* AuditLog).list({ limit: 10 })
  return { permissions, entries: entries.map((record) => record.details.permission).reverse() }
})

/** A write of the role repository and an entry of the log, the entry first as a use case orders them. */
const grant = (name: string) =>
  Effect.gen(function* () {
    const log = yield* AuditLog
    const roles = yield* RoleRepo
    yield* log.append(granted(name))
    yield* roles.assignPermission(role, permission(name))
  })

/**
 * Tables whose foreign key is checked only at COMMIT (in SQLite and PostgreSQL alike): a child
 * row without its parent is written, and the COMMIT refuses it.
 */
const deferredCheck = (sql: SqlClient.SqlClient) =>
  Effect.all([
    sql`CREATE TABLE tx_parents (id INTEGER PRIMARY KEY)`,
    sql`CREATE TABLE tx_children (parent_id INTEGER NOT NULL REFERENCES tx_parents (id) DEFERRABLE INITIALLY DEFERRED)`
  ])

for (const store of stores) {
  const run = <A, E>(effect: Effect.Effect<A, E, Ports>) => effect.pipe(Effect.provide(store.layer()))
  const runSql = <A, E>(effect: Effect.Effect<A, E, Ports | SqlClient.SqlClient>) =>
    effect.pipe(Effect.provide(store.layer()))

  describe.skipIf(store.skip)(`Transaction contract (${store.name})`, () => {
    it.effect("commits the work's writes together, of several ports, and answers its value", () =>
      run(
        Effect.gen(function* () {
          const tx = yield* Transaction
          expect(yield* tx.transaction(Effect.as(grant("read"), "done"))).toBe("done")
          expect(yield* committed).toEqual({ permissions: [permission("read")], entries: ["read"] })
        })
      )
    )

    it.effect("fails with the work's own failure, as it is", () =>
      run(
        Effect.gen(function* () {
          const tx = yield* Transaction
          expect(yield* Effect.flip(tx.transaction(Effect.fail("refused" as const)))).toBe("refused")
        })
      )
    )

    it.effect("a nested call joins the outer one: both commit with it, and nothing waits for itself", () =>
      run(
        Effect.gen(function* () {
          const tx = yield* Transaction
          yield* tx.transaction(Effect.zipRight(grant("read"), tx.transaction(grant("write"))))
          expect(yield* committed).toEqual({
            permissions: [permission("read"), permission("write")],
            entries: ["read", "write"]
          })
        })
      )
    )

    // SQLite's one connection and BEGIN IMMEDIATE; PostgreSQL isolates by its own rules (READ
    // COMMITTED), and the use cases compare-and-set what must not change under them.
    if (store.name !== "postgresql") {
      it.effect("runs one at a time: a transaction's read and its write see no other's in between", () =>
        run(
          Effect.gen(function* () {
            const tx = yield* Transaction
            const roles = yield* RoleRepo
            const next = tx.transaction(
              Effect.gen(function* () {
                const held = yield* roles.permissionsOf(role)
                yield* Effect.yieldNow()
                yield* roles.assignPermission(role, permission(`n${held.length}`))
              })
            )
            yield* Effect.all([next, next, next], { concurrency: "unbounded" })
            expect(yield* roles.permissionsOf(role)).toEqual([permission("n0"), permission("n1"), permission("n2")])
          })
        )
      )
    }

    it.effect("rolls back together: a failure after the writes leaves none of them", () =>
      run(
        Effect.gen(function* () {
          const tx = yield* Transaction
          const failed = yield* Effect.flip(tx.transaction(Effect.zipRight(grant("read"), Effect.fail("refused"))))
          expect(failed).toBe("refused")
          expect(yield* committed).toEqual({ permissions: [], entries: [] })
        })
      )
    )

    it.effect("an entry the store refuses fails it as StoreUnavailableError and undoes the writes before it", () =>
      run(
        Effect.gen(function* () {
          const tx = yield* Transaction
          // A NULL event type breaks the table's NOT NULL: the store refuses the entry.
          const unwritable = { ...granted("read"), type: null } as unknown as AuditEntry
          const failure = yield* Effect.flip(
            tx.transaction(
              Effect.zipRight(
                (yield* RoleRepo).assignPermission(role, permission("read")),
                (yield* AuditLog).append(unwritable)
              )
            )
          )
          expect(failure._tag).toBe("StoreUnavailableError")
          expect(yield* committed).toEqual({ permissions: [], entries: [] })
        })
      )
    )

    it.effect("a nested call's writes are undone with the outer one", () =>
      run(
        Effect.gen(function* () {
          const tx = yield* Transaction
          const failed = yield* Effect.flip(
            tx.transaction(Effect.all([grant("read"), tx.transaction(grant("write")), Effect.fail("refused")]))
          )
          expect(failed).toBe("refused")
          expect(yield* committed).toEqual({ permissions: [], entries: [] })
        })
      )
    )

    it.effect("a failed COMMIT is StoreUnavailableError, commits nothing, and the next transaction commits", () =>
      runSql(
        Effect.gen(function* () {
          const sql = yield* SqlClient.SqlClient
          const tx = yield* Transaction
          yield* deferredCheck(sql)
          const failure = yield* Effect.flip(
            tx.transaction(Effect.zipRight(grant("read"), sql`INSERT INTO tx_children (parent_id) VALUES (1)`))
          )
          expect(failure._tag).toBe("StoreUnavailableError")
          expect(yield* committed).toEqual({ permissions: [], entries: [] })
          // The connection is not left inside the refused transaction, where every later write
          // would wait for a COMMIT that never comes.
          yield* tx.transaction(grant("write"))
          expect(yield* committed).toEqual({ permissions: [permission("write")], entries: ["write"] })
        })
      )
    )

    if (store.name.startsWith("sqlite")) {
      it.effect("a failed BEGIN is StoreUnavailableError, and the work never runs", () =>
        runSql(
          Effect.gen(function* () {
            const sql = yield* SqlClient.SqlClient
            const tx = yield* Transaction
            let ran = false
            // A transaction left open on the connection: SQLite refuses a BEGIN inside it (and
            // @effect/sql rolls it back then).
            yield* sql`BEGIN`
            const failure = yield* Effect.flip(tx.transaction(Effect.sync(() => (ran = true))))
            expect(failure._tag).toBe("StoreUnavailableError")
            expect(ran).toBe(false)
            yield* tx.transaction(grant("read"))
            expect(yield* committed).toEqual({ permissions: [permission("read")], entries: ["read"] })
          })
        )
      )
    }
  })
}

describe.skipIf(!privatePostgresPossible)("Transaction contract (postgresql, stopped)", () => {
  it.live("a failed BEGIN is StoreUnavailableError, and the work never runs", () =>
    Effect.gen(function* () {
      const cluster = yield* Effect.acquireRelease(
        Effect.promise(() => privatePostgres()),
        (made) => Effect.promise(() => made.remove())
      )
      const context = yield* Layer.build(
        sqlRepositories().pipe(
          Layer.provide(PgDatabase.layer(Redacted.make(cluster.url), { maxConnections: 2 })),
          Layer.provide(quiet)
        )
      )
      const tx = yield* Effect.provide(Transaction, context)
      yield* Effect.promise(() => cluster.stop())
      let ran = false
      const failure = yield* Effect.flip(tx.transaction(Effect.sync(() => (ran = true))))
      expect(failure._tag).toBe("StoreUnavailableError")
      expect(ran).toBe(false)
    }).pipe(Effect.scoped)
  )
})
