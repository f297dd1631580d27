import * as SqlClient from "@effect/sql/SqlClient"
import type { Connection } from "@effect/sql/SqlConnection"
import type { SqlError } from "@effect/sql/SqlError"
import type { Statement } from "@effect/sql/Statement"
import { Effect } from "effect"

/** Runs a statement and answers its rows (none for a statement that returns none). */
export type Execute = <A extends object>(statement: Statement<A>) => Effect.Effect<ReadonlyArray<A>, SqlError>

/** The statement run as the client runs it: on the fiber's transaction, if it has one open. */
export const throughClient: Execute = (statement) => statement

/** Where this fiber's transaction is open, if it has one. */
export const openTransaction = Effect.serviceOption(SqlClient.TransactionConnection)

/**
 * `rows` as the client's own span of a statement (`sql.execute`, its text among the attributes),
 * for a path built under a tracer that is on; as they are under one that is off, where the client
 * would make a span that nobody reads.
 */
export const statementSpan =
  (traced: boolean, attributes: Readonly<Record<string, unknown>>) =>
  <A, E, R>(text: string, rows: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
    traced
      ? Effect.withSpan(rows, "sql.execute", {
          kind: "client",
          captureStackTrace: false,
          attributes: { ...attributes, "db.operation.name": "execute", "db.query.text": text }
        })
      : rows

/**
 * The rows of a statement, run on `connection` as the client runs it there, without the steps
 * the client takes first at every statement (its span, its connection looked up again, its
 * hooks): for the statements of a transaction the client has open on that connection.
 */
export const executeOn =
  (span: ReturnType<typeof statementSpan>) =>
  (connection: Connection): Execute =>
  (statement) =>
    Effect.suspend(() => {
      const [text, values] = statement.compile()
      return span(text, connection.execute(text, values, undefined))
    })
