import * as SqlClient from "@effect/sql/SqlClient"
import { SqlError } from "@effect/sql/SqlError"
import type { Statement } from "@effect/sql/Statement"
import { describe, expect, it } from "@effect/vitest"
import { Duration, Effect, Exit, Layer, Redacted, Tracer } from "effect"
import * as PgDatabase from "../../infrastructure/sql/PgDatabase.js"
import { PgDirect } from "../../infrastructure/sql/PgDirect.js"
import { readerOf, transactionOf } from "../../infrastructure/sql/statements.js"
import { freshSchemaUrl, noPostgres } from "../support/postgres.js"
import { clientStatements } from "../support/sessionRecords.js"

/**
 * The hot reads' path on PostgreSQL: the client's pool used by hand. What it answers, what it
 * does with a statement that is given up or refused, or whose connection dies, and where a read
 * inside a transaction goes.
 */

/** The client and the direct reads over a fresh schema, with a pool of `connections`. */
const database = (connections: number) =>
  Layer.unwrapScoped(
    Effect.map(freshSchemaUrl, ({ url }) => PgDatabase.client(Redacted.make(url), { maxConnections: connections }))
  )

const read = <A extends object>(statement: (sql: SqlClient.SqlClient) => Statement<A>) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const direct = yield* PgDirect
    return yield* direct.read(statement(sql))
  })

/** The server process behind the pool's connection, asked through the direct path. */
const backend = read((sql) => sql<{ readonly pid: number }>`SELECT pg_backend_pid() AS pid`).pipe(
  Effect.map(([row]) => row?.pid)
)

/** Whether a statement of this text is still running on the server, from another connection. */
const stillRunning = (marker: string) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql<{ readonly n: number }>`SELECT count(*)::int AS n FROM pg_stat_activity
      WHERE state = 'active' AND query LIKE ${`%${marker}%`} AND query NOT LIKE '%pg_stat_activity%'`.pipe(
      Effect.map(([row]) => (row?.n ?? 0) > 0)
    )
  )

const waitUntil = <E, R>(check: Effect.Effect<boolean, E, R>) =>
  Effect.gen(function* () {
    for (let tries = 0; tries < 100; tries++) {
      if (yield* check) return true
      yield* Effect.sleep(Duration.millis(50))
    }
    return false
  })

describe.skipIf(noPostgres)("PgDirect: reads on the client's pool (PostgreSQL)", () => {
  it.live("answers the rows the client answers, value for value", () =>
    Effect.gen(function* () {
      const sql = yield* SqlClient.SqlClient
      const statement = () =>
        sql`SELECT 42::int AS n, 9007199254740993::bigint AS big, 'x'::text AS t, true AS b, NULL::text AS nothing,
          '{"a":[1,2]}'::jsonb AS j, ${"bound"}::text AS p`
      const direct = yield* (yield* PgDirect).read(statement())
      const client = yield* statement()
      expect(direct).toEqual(client)
      expect(direct).toHaveLength(1)
    }).pipe(Effect.provide(database(2)))
  )

  it.live("a statement the server refuses fails as a SqlError, and its connection goes back to the pool whole", () =>
    Effect.gen(function* () {
      const before = yield* backend
      const refused = yield* Effect.exit(read((sql) => sql`SELECT 1 / 0`))
      expect(Exit.isFailure(refused) && Exit.causeOption(refused)).toBeTruthy()
      expect(yield* Effect.flip(read((sql) => sql`SELECT no_such_column FROM pg_class`))).toBeInstanceOf(SqlError)
      // One connection in the pool: the same server process answers after both refusals.
      expect(yield* backend).toBe(before)
    }).pipe(Effect.provide(database(1)))
  )

  it.live("a read given up (a timeout) is cancelled on the server, and its connection comes back", () =>
    Effect.gen(function* () {
      const marker = "portcullis_direct_sleep_a"
      const given = yield* Effect.exit(
        read((sql) => sql.unsafe(`SELECT pg_sleep(30) AS ${marker}`)).pipe(Effect.timeout(Duration.millis(300)))
      )
      expect(Exit.isFailure(given)).toBe(true)
      // The pool has two connections; the cancel takes one while the sleep holds the other.
      expect(yield* waitUntil(Effect.map(stillRunning(marker), (running) => !running))).toBe(true)
      // Both connections are free again: two reads at once hold both.
      const pids = yield* Effect.all([backend, backend], { concurrency: 2 }).pipe(Effect.timeout(Duration.seconds(5)))
      expect(pids).toHaveLength(2)
    }).pipe(Effect.provide(database(2)))
  )

  it.live("a read given up while it waits for a connection gives the connection back once it gets one", () =>
    Effect.gen(function* () {
      const sleeping = yield* Effect.fork(read((sql) => sql`SELECT pg_sleep(0.5)`))
      yield* Effect.sleep(Duration.millis(100))
      const waiting = yield* Effect.exit(backend.pipe(Effect.timeout(Duration.millis(100))))
      expect(Exit.isFailure(waiting)).toBe(true)
      yield* sleeping.await
      // With one connection, a connection the abandoned read kept would leave this waiting for ever.
      expect(yield* backend.pipe(Effect.timeout(Duration.seconds(3)))).toBeTypeOf("number")
    }).pipe(Effect.provide(database(1)))
  )

  it.live("a connection the server ends under a read fails the read, and the pool opens a new one", () =>
    Effect.gen(function* () {
      const sql = yield* SqlClient.SqlClient
      const marker = "portcullis_direct_sleep_b"
      const victim = yield* Effect.fork(read((sql) => sql.unsafe(`SELECT pg_sleep(30) AS ${marker}`)))
      expect(yield* waitUntil(stillRunning(marker))).toBe(true)
      const [row] = yield* sql<{ readonly pid: number }>`SELECT pid FROM pg_stat_activity
        WHERE state = 'active' AND query LIKE ${`%${marker}%`} AND query NOT LIKE '%pg_stat_activity%'`
      yield* sql`SELECT pg_terminate_backend(${row?.pid ?? 0})`
      const ended = yield* victim.await
      expect(Exit.isFailure(ended)).toBe(true)
      const after = yield* Effect.all([backend, backend], { concurrency: 2 }).pipe(Effect.timeout(Duration.seconds(5)))
      expect(after).not.toContain(row?.pid)
    }).pipe(Effect.provide(database(2)))
  )

  it.live("a read inside a transaction goes through the client, and sees the transaction's own writes", () =>
    Effect.gen(function* () {
      const sql = yield* SqlClient.SqlClient
      const reader = yield* readerOf
      yield* sql`CREATE TABLE direct_notes (note text)`
      const inside = yield* sql.withTransaction(
        Effect.gen(function* () {
          yield* sql`INSERT INTO direct_notes (note) VALUES ('uncommitted')`
          return yield* reader(sql<{ readonly note: string }>`SELECT note FROM direct_notes`)
        })
      )
      expect(inside).toEqual([{ note: "uncommitted" }])
      // Outside, the reader takes the direct path, and sees what was committed.
      const outside = yield* reader(sql<{ readonly note: string }>`SELECT note FROM direct_notes`)
      expect(outside).toEqual([{ note: "uncommitted" }])
    }).pipe(Effect.provide(database(2)))
  )

  it.live(
    "a transaction's statements go straight to its connection, and commit or roll back with the client's own",
    () =>
      Effect.gen(function* () {
        const sql = yield* SqlClient.SqlClient
        const inTransaction = yield* transactionOf(sql)
        yield* sql`CREATE TABLE direct_entries (entry text)`
        const entries = sql<{ readonly entry: string }>`SELECT entry FROM direct_entries ORDER BY entry`
        const { value: seen, statements } = yield* clientStatements(
          inTransaction((execute) =>
            Effect.gen(function* () {
              yield* execute(sql`INSERT INTO direct_entries (entry) VALUES ('kept')`)
              const own = yield* execute(entries)
              // A statement written for the client joins the same transaction.
              const client = yield* sql<{ readonly entry: string }>`SELECT entry FROM direct_entries`
              return { own, client }
            })
          )
        )
        expect(seen).toEqual({ own: [{ entry: "kept" }], client: [{ entry: "kept" }] })
        expect(statements.map(([text]) => text)).toEqual(["SELECT entry FROM direct_entries"])
        const failed = yield* Effect.exit(
          inTransaction((execute) =>
            Effect.zipRight(
              execute(sql`INSERT INTO direct_entries (entry) VALUES ('rolled back')`),
              Effect.fail("refused")
            )
          )
        )
        expect(Exit.isFailure(failed)).toBe(true)
        expect(yield* entries).toEqual([{ entry: "kept" }])
      }).pipe(Effect.provide(database(2)))
  )

  it.live("is the client's `sql.execute` span under a tracer that is on, and no span under one that is off", () =>
    Effect.gen(function* () {
      const named: Array<string> = []
      const base = yield* Effect.tracer
      const tracer = Tracer.make({
        span: (name, ...rest) => {
          named.push(name)
          return base.span(name, ...rest)
        },
        context: base.context
      })
      const spansOf = (enabled: boolean) =>
        Effect.gen(function* () {
          named.length = 0
          yield* read((sql) => sql`SELECT 1 AS one`)
          return named.filter((name) => name === "sql.execute").length
        }).pipe(
          Effect.provide(database(1).pipe(Layer.provide(Layer.setTracerEnabled(enabled)))),
          Effect.withTracerEnabled(enabled),
          Effect.withTracer(tracer)
        )
      expect(yield* spansOf(true)).toBe(1)
      expect(yield* spansOf(false)).toBe(0)
    })
  )
})
