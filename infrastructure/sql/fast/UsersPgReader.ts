import * as SqlClient from "@effect/sql/SqlClient"
import { Effect, Layer } from "effect"
import { UserRepo } from "../../../application/ports/UserRepo.js"
import type { UserRepoOptions } from "../../users.js"
import { PgPool } from "../PgDatabase.js"
import * as UserRepoSql from "../UserRepoSql.js"
import { readStatements, userOfRows } from "../userRows.js"
import { named } from "./named.js"
import { readOutsideTransactions } from "./reading.js"
import { sameRowsSameUsers } from "./sameRows.js"

/**
 * UserRepo on PostgreSQL, its `findById` (the read of a token grant's user, of userinfo's, of most
 * signed-in requests') a named statement on the client's own pool (named.ts, reading.ts); a row
 * read again with the same values answers the user decoded before (sameRows.ts). Everything else
 * is the plain adapter's.
 */
export const layer = (options: Pick<UserRepoOptions, "idType">) =>
  Layer.effect(
    UserRepo,
    Effect.gen(function* () {
      const sql = yield* SqlClient.SqlClient
      const pool = yield* PgPool
      const plain = yield* UserRepoSql.make(options)
      const findById = named(pool, "portcullis_user_by_id", readStatements(sql).findById)
      const userOf = sameRowsSameUsers()
      return UserRepo.of({
        ...plain,
        findById: readOutsideTransactions(plain.findById, findById, (rows) => userOfRows(rows, userOf))
      })
    })
  )
