import * as SqlClient from "@effect/sql/SqlClient"
import { Effect, Layer } from "effect"
import { UserRepo } from "../../../application/ports/UserRepo.js"
import type { UserRepoOptions } from "../../users.js"
import * as UserRepoSql from "../UserRepoSql.js"
import { readStatements, userOfRows } from "../userRows.js"
import { ReadingConnection } from "./connections.js"
import { readingOn, readOutsideTransactions } from "./reading.js"
import { sameRowsSameUsers } from "./sameRows.js"

/**
 * UserRepo on a SQLite file, its `findById` (the read of a token grant's user, of userinfo's, of
 * most signed-in requests') on the file's reading connection (reading.ts, connections.ts): a user deactivated or
 * given a role is read as such by the next request. A row read again with the same values answers
 * the user decoded before (sameRows.ts). Everything else is the plain adapter's.
 */
export const layer = (options: Pick<UserRepoOptions, "idType">) =>
  Layer.scoped(
    UserRepo,
    Effect.gen(function* () {
      const sql = yield* SqlClient.SqlClient
      const plain = yield* UserRepoSql.make(options)
      const db = yield* ReadingConnection
      const findById = readingOn(db, readStatements(sql).findById)
      const userOf = sameRowsSameUsers()
      return UserRepo.of({
        ...plain,
        findById: readOutsideTransactions(plain.findById, findById, (rows) => userOfRows(rows, userOf))
      })
    })
  )
