import { Effect, Option } from "effect"
import { type Execute, openTransaction, throughClient } from "./execute.js"
import { PgDirect } from "./PgDirect.js"
import { SqliteDirect } from "./SqliteDirect.js"

/**
 * The rows of a read: on the database's direct path where it has one (SqliteDirect's reading
 * connection, PgDirect's pool), unless a transaction is open on this fiber, which must read its
 * own writes on its own connection: the direct one's for a transaction open there, else the client's.
 */
export const readerOf = Effect.map(
  Effect.all([Effect.serviceOption(SqliteDirect), Effect.serviceOption(PgDirect)]),
  ([sqlite, pg]): Execute => {
    if (Option.isSome(sqlite)) {
      const direct = sqlite.value
      return (statement) =>
        Effect.flatMap(openTransaction, (open) =>
          Option.isNone(open)
            ? direct.read(statement)
            : open.value[0] === direct.connection
              ? direct.execute(statement)
              : statement
        )
    }
    if (Option.isSome(pg)) {
      const direct = pg.value
      return (statement) =>
        Effect.flatMap(openTransaction, (open) => (Option.isNone(open) ? direct.read(statement) : statement))
    }
    return throughClient
  }
)
