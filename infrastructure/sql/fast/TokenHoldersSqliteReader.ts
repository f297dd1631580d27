import * as SqlClient from "@effect/sql/SqlClient"
import { SqlError } from "@effect/sql/SqlError"
import type { Statement } from "@effect/sql/Statement"
import Database from "better-sqlite3"
import { Effect, type Either, Layer } from "effect"
import type { ParseError } from "effect/ParseResult"
import { TokenHolders } from "../../../application/ports/TokenHolders.js"
import { unavailable } from "../failures.js"
import { holderOfRows, presentedOfRows, statements } from "../TokenHoldersSql.js"
import { sameRowsSameUsers } from "./sameRows.js"

type Rows = ReadonlyArray<Readonly<Record<string, unknown>>>

/**
 * A statement of the plain adapter's, compiled once for SQLite and prepared on `db`: a call binds
 * its values where the client's compilation put them (found by compiling it with a marker for
 * each) and runs it at once, one synchronous call of the driver.
 */
const prepared = <V extends ReadonlyArray<string>>(
  db: Database.Database,
  build: (...values: V) => Statement<object>,
  arity: V["length"]
) => {
  const markers = Array.from({ length: arity }, (_, index) => `\u0000value:${index}`) as unknown as V
  const [text, params] = build(...markers).compile()
  const places = params.map((param) => markers.indexOf(param as string))
  if (places.length !== arity || places.some((place) => place < 0)) {
    throw new Error("every value must be bound as a parameter exactly once")
  }
  const statement = db.prepare(text)
  return (...values: V): Rows => statement.all(...places.map((place) => values[place])) as Rows
}

/** The reading's outcome, decided already: a driver's throw is a SqlError, as the client's would be. */
const attempt = <A>(read: () => Either.Either<A, ParseError>): Effect.Effect<A, SqlError | ParseError> => {
  try {
    return read()
  } catch (cause) {
    return Effect.fail(new SqlError({ cause, message: "Failed to execute statement" }))
  }
}

/**
 * TokenHolders on a SQLite file, read on a connection of its own that only reads, outside
 * @effect/sql's client: each read is one synchronous call of better-sqlite3 on a statement
 * prepared once, where the client's path (its span, the connection's permit, its statement cache,
 * a compilation of the statement) costs a token's every use several times what SQLite spends on
 * it. The statements and the reading of their rows are the plain adapter's (TokenHoldersSql).
 *
 * In WAL mode the reader sees every transaction committed, on any connection of any process, and
 * nothing that is not: what is acknowledged (a revocation above all) is committed, so it is what
 * is read. Not for a read inside a transaction, which it would not see: neither of its callers
 * (an authenticated request, a refresh before its rotation) makes one there.
 */
export const layer = (filename: string) =>
  Layer.scoped(
    TokenHolders,
    Effect.gen(function* () {
      const sql = yield* SqlClient.SqlClient
      const db = yield* Effect.acquireRelease(
        Effect.try({
          try: () => {
            const opened = new Database(filename, { readonly: true, fileMustExist: true })
            // A lock held elsewhere (the log being recovered) is waited for as the client waits.
            opened.pragma("busy_timeout = 5000")
            return opened
          },
          catch: (cause) => new SqlError({ cause, message: "the reading connection cannot open it" })
        }),
        (opened) => Effect.sync(() => opened.close())
      )
      const statement = statements(sql)
      const holder = prepared(db, statement.holder, 2)
      const presented = prepared(db, statement.presented, 1)
      const userOf = sameRowsSameUsers()
      return TokenHolders.of({
        find: (userId, familyId) =>
          unavailable(Effect.suspend(() => attempt(() => holderOfRows(holder(userId, familyId), userOf)))),
        presented: (digest) =>
          unavailable(Effect.suspend(() => attempt(() => presentedOfRows(presented(digest), userOf))))
      })
    })
  )
