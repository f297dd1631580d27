import type { SqlError } from "@effect/sql/SqlError"
import { Effect } from "effect"
import type { ParseError } from "effect/ParseResult"
import type { StoreUnavailableError } from "../../../application/ports/StoreUnavailableError.js"
import { unavailable } from "../failures.js"
import { attempt, type Rows } from "./prepared.js"
import { unlessInTransaction } from "./transactions.js"

/**
 * A plain adapter's read, made on a reading connection of the fast adapter's own (`statement`,
 * the plain adapter's, prepared there; `ofRows`, the plain adapter's reading of its rows) outside
 * @effect/sql's client: one synchronous call of the driver, without the client's permit, its
 * statement cache or a compilation of the statement. In WAL mode the reading connection sees
 * every transaction committed, on any connection of any process, and nothing that is not. Inside
 * a transaction of the client (the Transaction port), whose writes only its own connection sees,
 * the plain read instead.
 */
export const readOutsideTransactions =
  <V extends ReadonlyArray<unknown>, A>(
    plain: (...values: V) => Effect.Effect<A, StoreUnavailableError>,
    statement: { readonly all: (...values: V) => Rows },
    ofRows: (rows: Rows) => Effect.Effect<A, SqlError | ParseError>
  ) =>
  (...values: V): Effect.Effect<A, StoreUnavailableError> =>
    unlessInTransaction(plain(...values), () =>
      unavailable(Effect.suspend(() => attempt(() => ofRows(statement.all(...values)))))
    )
