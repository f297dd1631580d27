import * as SqlClient from "@effect/sql/SqlClient"
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import * as SqliteDatabase from "../../infrastructure/sql/SqliteDatabase.js"
import { compiledOnce } from "../../infrastructure/sql/statements.js"
import * as Postgres from "../support/postgres.js"

/**
 * A hot statement's text is compiled once and each call binds its own values where the template
 * placed them, on each dialect: a value used first in the arguments but last in the text lands
 * last, and a template that drops a value or binds one twice is refused when it is made.
 */
describe.each([
  { name: "sqlite", skip: false, layer: () => SqliteDatabase.layer(":memory:") },
  { name: "postgresql", skip: Postgres.noPostgres, layer: () => Postgres.layer() }
])("compiledOnce on $name", ({ skip, layer }) => {
  it.effect.skipIf(skip)("binds each call's values in the places the template gave them", () =>
    Effect.gen(function* () {
      const sql = yield* SqlClient.SqlClient
      let built = 0
      const pair = compiledOnce(sql, 2, (first: string, second: string) => {
        built++
        return sql`SELECT CAST(${second} AS TEXT) AS second, CAST(${first} AS TEXT) AS first, 'fixed' AS fixed`
      })
      expect(yield* pair("a", "b")).toEqual([{ second: "b", first: "a", fixed: "fixed" }])
      expect(yield* pair("c", "d")).toEqual([{ second: "d", first: "c", fixed: "fixed" }])
      // The template was built (and compiled) when the statement was made, never at a call.
      expect(built).toBe(1)
    }).pipe(Effect.provide(layer()))
  )

  it.effect.skipIf(skip)("refuses a template that leaves a value out or binds one twice", () =>
    Effect.gen(function* () {
      const sql = yield* SqlClient.SqlClient
      expect(() => compiledOnce(sql, 2, (first: string, _second: string) => sql`SELECT ${first} AS first`)).toThrow(
        /exactly once/
      )
      expect(() => compiledOnce(sql, 1, (only: string) => sql`SELECT ${only} AS a, ${only} AS b`)).toThrow(
        /exactly once/
      )
    }).pipe(Effect.provide(layer()))
  )
})
