import * as SqlClient from "@effect/sql/SqlClient"
import { Effect, Layer } from "effect"
import { UserRepo } from "../../../application/ports/UserRepo.js"
import type { UserRepoOptions } from "../../users.js"
import { unavailable } from "../failures.js"
import * as UserRepoSql from "../UserRepoSql.js"
import { readStatements, userOfRows } from "../userRows.js"
import { connection } from "./connections.js"
import { attempt, prepared } from "./prepared.js"
import { sameRowsSameUsers } from "./sameRows.js"
import { unlessInTransaction } from "./transactions.js"

/**
 * UserRepo on a SQLite file, its `findById` (the read of a token grant's user, of userinfo's, of
 * most signed-in requests') on a reading connection of its own, outside @effect/sql's client, as
 * TokenHoldersSqliteReader reads a token's holder: the file's committed state (a user deactivated
 * or given a role is read as such by the next request), without the client's permit. The
 * statement and the reading of its rows are the plain adapter's; inside a transaction of the
 * client, its read too.
 */
export const layer = (filename: string) => (options: Pick<UserRepoOptions, "idType">) =>
  Layer.scoped(
    UserRepo,
    Effect.gen(function* () {
      const sql = yield* SqlClient.SqlClient
      const plain = yield* UserRepoSql.make(options)
      const db = yield* connection(filename, "reading")
      const findById = prepared(db, readStatements(sql).findById)
      const userOf = sameRowsSameUsers()
      return UserRepo.of({
        ...plain,
        findById: (id) =>
          unlessInTransaction(plain.findById(id), () =>
            unavailable(Effect.suspend(() => attempt(() => userOfRows(findById.all(id), userOf))))
          )
      })
    })
  )
