import * as SqlClient from "@effect/sql/SqlClient"
import type { SqlError } from "@effect/sql/SqlError"
import type { Statement } from "@effect/sql/Statement"
import { Effect } from "effect"

/** Runs a statement and answers its rows (none for a statement that returns none). */
export type Execute = <A extends object>(statement: Statement<A>) => Effect.Effect<ReadonlyArray<A>, SqlError>

/** The statement run as the client runs it: on the fiber's transaction, if it has one open. */
export const throughClient: Execute = (statement) => statement

/** Where this fiber's transaction is open, if it has one. */
export const openTransaction = Effect.serviceOption(SqlClient.TransactionConnection)
