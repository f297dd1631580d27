import { randomBytes } from "node:crypto"
import * as SqlClient from "@effect/sql/SqlClient"
import { Effect, Layer, Logger, LogLevel, Redacted } from "effect"
import pg from "pg"
import type { SchemaOptions } from "../../infrastructure/sql/migrations.js"
import * as PgDatabase from "../../infrastructure/sql/PgDatabase.js"

/** The PostgreSQL the suites may use; unset, every PostgreSQL test is skipped. */
export const testDatabaseUrl = process.env.TEST_DATABASE_URL

/** True when the PostgreSQL tests must be skipped. */
export const noPostgres = testDatabaseUrl === undefined || testDatabaseUrl === ""

const admin = (statement: (sql: SqlClient.SqlClient) => Effect.Effect<unknown, unknown>) =>
  Effect.flatMap(SqlClient.SqlClient, statement).pipe(
    Effect.provide(PgDatabase.client(Redacted.make(testDatabaseUrl ?? ""), { maxConnections: 1 })),
    Effect.orDie
  )

/**
 * A schema of its own, dropped when the scope closes: answers a URL whose connections use it,
 * so that parallel test files and layers never see each other's rows.
 */
export const freshSchemaUrl = Effect.acquireRelease(
  Effect.gen(function* () {
    const schema = `portcullis_test_${randomBytes(6).toString("hex")}`
    yield* admin((sql) => sql`CREATE SCHEMA ${sql(schema)}`)
    const url = new URL(testDatabaseUrl ?? "")
    url.searchParams.set("options", `-c search_path=${schema}`)
    return { schema, url: url.toString() }
  }),
  ({ schema }) => admin((sql) => sql`DROP SCHEMA IF EXISTS ${sql(schema)} CASCADE`)
)

/** A migrated PostgreSQL database in a fresh schema, with a small pool. */
export const layer = (options: SchemaOptions = {}) =>
  Layer.unwrapScoped(
    Effect.map(freshSchemaUrl, ({ url }) => PgDatabase.layer(Redacted.make(url), { ...options, maxConnections: 4 }))
  ).pipe(Layer.provide(Logger.minimumLogLevel(LogLevel.Warning)))

/**
 * A database of its own on the test server, for a suite whose server processes must share one
 * (a schema in the URL would not reach every connection): its URL, and the statements that make
 * and drop it, for the suite's beforeAll and afterAll.
 */
export const scratchDatabase = (prefix: string) => {
  const name = `${prefix}_${randomBytes(4).toString("hex")}`
  const admin = async (statement: string) => {
    const client = new pg.Client({ connectionString: testDatabaseUrl })
    await client.connect()
    try {
      await client.query(statement)
    } finally {
      await client.end()
    }
  }
  const url = new URL(testDatabaseUrl || "postgres://localhost/x")
  url.pathname = `/${name}`
  return {
    url: url.href,
    create: () => admin(`CREATE DATABASE ${name}`),
    drop: () => admin(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`)
  }
}
