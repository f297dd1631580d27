import * as SqlClient from "@effect/sql/SqlClient"
import { describe, expect, it } from "@effect/vitest"
import { Duration, Effect, Exit, Fiber, Layer, Logger, LogLevel, Redacted } from "effect"
import { StoreUnavailableError } from "../../application/ports/StoreUnavailableError.js"
import { failingAsUnavailable } from "../../infrastructure/sql/failures.js"
import { named } from "../../infrastructure/sql/fast/named.js"
import * as PgDatabase from "../../infrastructure/sql/PgDatabase.js"
import { StoreTimeout } from "../../infrastructure/storeTimeout.js"
import * as Postgres from "../support/postgres.js"

/**
 * The fast adapters' named statements (infrastructure/sql/fast/named.ts) bound themselves with
 * one timer instead of the client's fibers: these hold that bound and what the pool is left with,
 * on a real PostgreSQL and a pool of one connection, so that a connection held is seen.
 */
const onePool = Layer.unwrapScoped(
  Effect.map(Postgres.freshSchemaUrl, ({ url }) => PgDatabase.client(Redacted.make(url), { maxConnections: 1 }))
).pipe(Layer.provide(Logger.minimumLogLevel(LogLevel.None)))

const statements = Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  const pool = yield* PgDatabase.PgPool
  yield* sql`CREATE TABLE marks (mark TEXT NOT NULL)`
  return {
    sql,
    pool,
    sleep: named(pool, "test_sleep", (seconds: number) => sql`SELECT pg_sleep(${seconds}) AS slept`),
    mark: named(pool, "test_mark", (mark: string) => sql`INSERT INTO marks (mark) VALUES (${mark}) RETURNING mark`),
    divide: named(pool, "test_divide", (by: number) => sql`SELECT 1 / ${by}::int AS quotient`),
    marks: () => sql<{ readonly mark: string }>`SELECT mark FROM marks`
  }
})

const within = (millis: number) => Effect.provideService(StoreTimeout, Duration.millis(millis))

describe.skipIf(Postgres.noPostgres)("a named statement on PostgreSQL (fast adapters)", () => {
  it.live("answers its rows, and runs again on the same connection under its name", () =>
    Effect.gen(function* () {
      const { mark, marks, sql } = yield* statements
      expect(yield* mark("first")).toEqual([{ mark: "first" }])
      expect(yield* mark("second")).toEqual([{ mark: "second" }])
      // Prepared once on the pool's one connection, under its name, which the client's own
      // statements share.
      const prepared = yield* sql<{ readonly name: string }>`SELECT name FROM pg_prepared_statements`
      expect(prepared.map((row) => row.name)).toContain("test_mark")
      expect((yield* marks()).map((row) => row.mark)).toEqual(["first", "second"])
    }).pipe(Effect.provide(onePool))
  )

  it.live("past the store timeout fails as an unavailable store in time, and the connection comes back after", () =>
    Effect.gen(function* () {
      const { sleep, mark } = yield* statements
      const started = Date.now()
      const exit = yield* Effect.exit(failingAsUnavailable(sleep(1.5)).pipe(within(300)))
      expect(exit).toEqual(Exit.fail(new StoreUnavailableError({ store: "database" })))
      expect(Date.now() - started).toBeLessThan(1_000)
      // The statement ends on its own connection, which then serves the next call.
      expect(yield* mark("after").pipe(within(5_000))).toEqual([{ mark: "after" }])
    }).pipe(Effect.provide(onePool))
  )

  it.live("timed out while it waits for a connection, it is never sent", () =>
    Effect.gen(function* () {
      const { sleep, mark, marks } = yield* statements
      const holding = yield* Effect.fork(sleep(0.8).pipe(within(5_000)))
      yield* Effect.sleep("100 millis")
      const exit = yield* Effect.exit(failingAsUnavailable(mark("late")).pipe(within(200)))
      expect(exit).toEqual(Exit.fail(new StoreUnavailableError({ store: "database" })))
      yield* Fiber.join(holding)
      yield* Effect.sleep("100 millis")
      expect(yield* marks()).toEqual([])
    }).pipe(Effect.provide(onePool))
  )

  it.live("a statement's own failure is a SqlError, and leaves the connection in the pool", () =>
    Effect.gen(function* () {
      const { divide, pool } = yield* statements
      const failed = yield* Effect.flip(divide(0))
      expect(failed._tag).toBe("SqlError")
      expect(yield* divide(1)).toEqual([{ quotient: 1 }])
      expect(pool.totalCount).toBe(1)
    }).pipe(Effect.provide(onePool))
  )

  it.live("a connection broken under the statement fails it, is dropped, and the next call opens another", () =>
    Effect.gen(function* () {
      const { sleep, mark, sql, pool } = yield* statements
      // The server says it ends the session before it closes the socket: the connection must be
      // dropped then, not handed back to the pool for the next call to be sent on it.
      const releases: Array<Error | undefined> = []
      pool.on("release", (error: Error | undefined) => releases.push(error))
      const running = yield* Effect.fork(Effect.exit(sleep(5).pipe(within(10_000))))
      yield* Effect.sleep("200 millis")
      // Another connection of the server's ends the sleeping one, as a restart or a proxy would.
      yield* Effect.promise(async () => {
        const { default: pg } = await import("pg")
        const admin = new pg.Client({ connectionString: Postgres.testDatabaseUrl })
        await admin.connect()
        await admin.query(
          "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE query LIKE 'SELECT pg_sleep%' AND pid <> pg_backend_pid()"
        )
        await admin.end()
      })
      const exit = yield* Fiber.join(running)
      expect(Exit.isFailure(exit) && JSON.stringify(exit.cause).includes("SqlError")).toBe(true)
      expect(releases).toHaveLength(1)
      expect(releases[0]).toBeInstanceOf(Error)
      expect(yield* mark("again")).toEqual([{ mark: "again" }])
      expect((yield* sql<{ readonly n: number }>`SELECT 1 AS n`)[0]?.n).toBe(1)
    }).pipe(Effect.provide(onePool))
  )

  it.live("a connection cut under the statement (its socket gone) fails it without ending the process", () =>
    Effect.gen(function* () {
      const { sleep, mark, pool } = yield* statements
      // The next connection handed out is cut while its statement runs, as a network would cut it.
      pool.once("acquire", (client) => {
        setTimeout(
          () =>
            (
              client as unknown as { connection: { stream: { destroy: (error: Error) => void } } }
            ).connection.stream.destroy(new Error("cut")),
          100
        )
      })
      const exit = yield* Effect.exit(sleep(2).pipe(within(5_000)))
      expect(Exit.isFailure(exit) && JSON.stringify(exit.cause).includes("SqlError")).toBe(true)
      expect(yield* mark("after the cut")).toEqual([{ mark: "after the cut" }])
    }).pipe(Effect.provide(onePool))
  )
})
