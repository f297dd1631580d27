import * as SqlClient from "@effect/sql/SqlClient"
import { Effect, Layer } from "effect"
import { RefreshTokenRepo, type Rotation } from "../../../application/ports/RefreshTokenRepo.js"
import { unavailable } from "../failures.js"
import * as RefreshTokenRepoSql from "../RefreshTokenRepoSql.js"
import { rotationStatements, rotationValues } from "../rotation.js"
import { connection } from "./connections.js"
import { groupCommits, RolledBack } from "./groupCommit.js"
import { prepared } from "./prepared.js"
import { unlessInTransaction } from "./transactions.js"

/**
 * RefreshTokenRepo on a SQLite file, its rotation (every refresh's write) committed on a
 * connection of its own, outside @effect/sql's client: synchronous better-sqlite3 transactions
 * (BEGIN IMMEDIATE, the plain adapter's three statements prepared once, COMMIT), where the client
 * spends an Effect (its span, its statement cache, a compilation) on each of the five, and the
 * rotations that arrive together committed together (groupCommit.ts), each in a savepoint of its
 * own, so that the disk's sync is paid once for them. Everything else is the plain adapter's
 * (RefreshTokenRepoSql), and so are the statements.
 *
 * The same guarantees as the plain rotation's:
 * - Durability: the connection commits with synchronous=FULL, as the client's does, and a
 *   rotation is answered only after the COMMIT of its group has returned.
 * - One writer at a time: the rotation holds the client's connection (its permit) while it
 *   commits, so no transaction of this process is open beside it, and another process's is waited
 *   for as busy_timeout says, as the client waits. Inside a transaction of the client (the
 *   Transaction port), whose permit is already held, it is the plain rotation, in that
 *   transaction.
 * - A compare-and-swap: BEGIN IMMEDIATE takes the file's write lock before the claim reads.
 * - A failure of a rotation's statement rolls that rotation back (its savepoint), a failure of the
 *   COMMIT the whole group, and each is an unavailable store, as the client's would be.
 */
export const layer = (filename: string) =>
  Layer.scoped(
    RefreshTokenRepo,
    Effect.gen(function* () {
      const sql = yield* SqlClient.SqlClient
      const plain = yield* RefreshTokenRepoSql.make
      const db = yield* connection(filename, "writing")
      const statement = rotationStatements(sql)
      const claim = prepared(db, statement.claim)
      const insert = prepared(db, statement.insert)
      const touch = prepared(db, statement.touch)
      const committed = groupCommits(sql.reserve, db, (rotation: Rotation): boolean => {
        const [claimed, successor, touched] = rotationValues(rotation)
        const family = claim.all(...claimed)[0]?.family_id as string | undefined
        if (family === undefined) return false
        insert.run(...successor)
        // The family ended between the claim of its token and its touch: the rotation rolls back.
        if (touch.all(...touched, family).length === 0) throw new RolledBack(false)
        return true
      })

      return RefreshTokenRepo.of({
        ...plain,
        rotate: (rotation) => unlessInTransaction(plain.rotate(rotation), () => unavailable(committed(rotation)))
      })
    })
  )
