import * as SqlClient from "@effect/sql/SqlClient"
import { SqlError } from "@effect/sql/SqlError"
import { Effect, Layer } from "effect"
import { Transaction } from "../../application/ports/Transaction.js"
import { boundedCall, transaction, unavailable } from "./failures.js"

/** The database's transaction (`sql.withTransaction`): the repositories' statements inside it run on its connection. */
export const make = Effect.map(SqlClient.SqlClient, (sql) => {
  const inTransaction = transaction(sql)
  return Transaction.of({
    transaction: (effect) =>
      // The whole transaction is bounded, not only its statements: its BEGIN and COMMIT would
      // otherwise wait for as long as a frozen database does. The work's own failures pass
      // through as they are; a failed BEGIN or COMMIT is the store's.
      boundedCall(
        inTransaction(effect).pipe(
          Effect.catchIf(
            (error): error is SqlError => error instanceof SqlError,
            (error) => unavailable(Effect.fail(error))
          )
        )
      )
  })
})

export const layer = Layer.effect(Transaction, make)
