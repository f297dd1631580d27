import * as SqlClient from "@effect/sql/SqlClient"
import { SqlError } from "@effect/sql/SqlError"
import { Effect, Layer } from "effect"
import { Transaction } from "../../application/ports/Transaction.js"
import { boundedCall, unavailable } from "./failures.js"
import { transactionOf } from "./statements.js"

/** The database's transaction: the repositories' statements inside it run on its connection. */
export const make = Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  const inTransaction = yield* transactionOf(sql)
  return Transaction.of({
    transaction: (effect) =>
      // The whole transaction is bounded, not only its statements: its BEGIN and COMMIT would
      // otherwise wait for as long as a frozen database does. The work's own failures pass
      // through as they are; a failed BEGIN or COMMIT is the store's.
      boundedCall(
        inTransaction(() => effect).pipe(
          Effect.catchIf(
            (error): error is SqlError => error instanceof SqlError,
            (error) => unavailable(Effect.fail(error))
          )
        )
      )
  })
})

export const layer = Layer.effect(Transaction, make)
