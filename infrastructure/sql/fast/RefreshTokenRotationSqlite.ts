import * as SqlClient from "@effect/sql/SqlClient"
import { Effect, Layer } from "effect"
import { RefreshTokenRepo, type Rotation } from "../../../application/ports/RefreshTokenRepo.js"
import * as RefreshTokenRepoSql from "../RefreshTokenRepoSql.js"
import { rotationStatements, rotationValues } from "../rotation.js"
import { connection, outsideTransaction } from "./connections.js"
import { attempt, prepared } from "./prepared.js"

/** The family ended between the claim of its token and its touch: the rotation rolls back. */
class FamilyEnded extends Error {}

/**
 * RefreshTokenRepo on a SQLite file, its rotation (every refresh's write) committed on a
 * connection of its own, outside @effect/sql's client: one synchronous better-sqlite3 transaction
 * (BEGIN IMMEDIATE, the plain adapter's three statements prepared once, COMMIT), where the client
 * spends an Effect (its span, its statement cache, a compilation) on each of the five. Everything
 * else is the plain adapter's (RefreshTokenRepoSql), and so are the statements.
 *
 * The same guarantees as the plain rotation's:
 * - Durability: the connection commits with synchronous=FULL, as the client's does.
 * - One writer at a time: the rotation holds the client's connection (its permit) while it
 *   commits, so no transaction of this process is open beside it, and another process's is waited
 *   for as busy_timeout says, as the client waits. Inside a transaction of the client (the
 *   Transaction port), whose permit is already held, it is the plain rotation, in that
 *   transaction.
 * - A compare-and-swap: BEGIN IMMEDIATE takes the file's write lock before the claim reads.
 * - A failure of any statement or of the COMMIT rolls back (better-sqlite3's transaction does)
 *   and is an unavailable store, as the client's would be.
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
      const rotateNow = db.transaction((rotation: Rotation): boolean => {
        const [claimed, successor, touched] = rotationValues(rotation)
        const family = claim.all(...claimed)[0]?.family_id as string | undefined
        if (family === undefined) return false
        insert.run(...successor)
        if (touch.all(...touched, family).length === 0) throw new FamilyEnded()
        return true
      })
      const committed = (rotation: Rotation) =>
        attempt(() => {
          try {
            return Effect.succeed(rotateNow.immediate(rotation))
          } catch (error) {
            if (error instanceof FamilyEnded) return Effect.succeed(false)
            throw error
          }
        })

      return RefreshTokenRepo.of({
        ...plain,
        rotate: (rotation) => outsideTransaction(sql, plain.rotate(rotation), () => committed(rotation))
      })
    })
  )
