import * as SqlClient from "@effect/sql/SqlClient"
import { Effect, Option } from "effect"

/**
 * `fast()`, a fast adapter's call on a connection of its own (or the pool's), which sees what is
 * committed; inside a transaction of the client (the Transaction port), whose writes only its own
 * connection sees and whose permit it holds, `plain` instead, the plain adapter's call in that
 * transaction.
 */
export const unlessInTransaction = <A, E, R>(plain: Effect.Effect<A, E, R>, fast: () => Effect.Effect<A, E, R>) =>
  Effect.flatMap(Effect.serviceOption(SqlClient.TransactionConnection), (open) =>
    Option.isSome(open) ? plain : fast()
  )
