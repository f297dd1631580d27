import * as SqlClient from "@effect/sql/SqlClient"
import { Effect, Layer } from "effect"
import { RefreshTokenRepo } from "../../../application/ports/RefreshTokenRepo.js"
import { failingAsUnavailable } from "../failures.js"
import { PgPool } from "../PgDatabase.js"
import * as RefreshTokenRepoSql from "../RefreshTokenRepoSql.js"
import { oneStatementValues, oneStatementWon, rotationInOneStatement } from "../rotation.js"
import { named } from "./named.js"
import { unlessInTransaction } from "./transactions.js"

/**
 * RefreshTokenRepo on PostgreSQL, its rotation (every refresh's write) run outside @effect/sql's
 * client: the plain adapter's one statement (rotation.ts), named (fast/named.ts), so that
 * PostgreSQL parses and plans it once on each connection, and one callback of the driver where the
 * client spends a span, a compilation and two fibers. The statement is its own transaction, with
 * the plain adapter's guarantees (a compare-and-swap, rolled back whole when the family ended
 * meanwhile). Everything else is the plain adapter's (RefreshTokenRepoSql).
 * Inside a transaction of the client, the plain adapter's rotation (`unlessInTransaction`).
 */
export const layer = Layer.effect(
  RefreshTokenRepo,
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const pool = yield* PgPool
    const plain = yield* RefreshTokenRepoSql.make
    const rotateNow = named(pool, "portcullis_rotation", rotationInOneStatement(sql))
    return RefreshTokenRepo.of({
      ...plain,
      rotate: (rotation) =>
        unlessInTransaction(plain.rotate(rotation), () =>
          failingAsUnavailable(oneStatementWon(rotateNow(...oneStatementValues(rotation))))
        )
    })
  })
)
