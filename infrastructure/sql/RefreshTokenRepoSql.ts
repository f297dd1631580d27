import * as SqlClient from "@effect/sql/SqlClient"
import { Effect, Layer, Option, Schema } from "effect"
import { RefreshTokenRepo, type SessionPruneStep } from "../../application/ports/RefreshTokenRepo.js"
import type { StoreUnavailableError } from "../../application/ports/StoreUnavailableError.js"
import { UserNotFoundError } from "../../domain/errors.js"
import { FamilyId, type StoredRefreshToken, TokenFamily } from "../../domain/Session.js"
import { validated } from "../../domain/validated.js"
import { SqlMillis } from "./columns.js"
import { boundedCall, isForeignKeyViolation, transaction, unavailable } from "./failures.js"
import { type KeyedRow, keyedBatch } from "./keyedBatch.js"
import {
  oneStatementValues,
  oneStatementWon,
  rotationInOneStatement,
  rotationStatements,
  rotationValues,
  tokenValues
} from "./rotation.js"
import { firstTokenWithFamily, tokenWithFamilyColumns } from "./tokenRows.js"

const Millis = SqlMillis
const OptionalMillis = Schema.OptionFromNullOr(Millis)

const decodeFamilies = Schema.decodeUnknown(
  Schema.Array(
    Schema.Struct({
      ...TokenFamily.fields,
      created_at: Millis,
      last_used_at: Millis,
      expires_at: Millis,
      revoked_at: OptionalMillis
    })
  )
)

/**
 * A family `f` ended (revoked or expired) before `before`: never NULL, so that its negation is
 * true of a live family.
 */
const endedBefore = (sql: SqlClient.SqlClient, before: number) =>
  sql`((f.revoked_at IS NOT NULL AND f.revoked_at < ${before}) OR f.expires_at < ${before})`

/**
 * The rows of each sweep's step whose purpose ended before `before`: where they are (`t` is
 * refresh_tokens, `f` token_families), the key a batch takes them in the order of, the column
 * naming the row changed, and the condition; each served by an index (migrations 0001, 0009).
 */
const prunable = (sql: SqlClient.SqlClient, step: SessionPruneStep, before: number) => {
  const tokensOfFamilies = sql`token_families f JOIN refresh_tokens t ON t.family_id = f.family_id`
  switch (step) {
    case "expiredTokens":
      return { from: sql`refresh_tokens t`, key: "t.expires_at", id: "t.digest", where: sql`t.expires_at < ${before}` }
    case "revokedSessionTokens":
      return { from: tokensOfFamilies, key: "f.revoked_at", id: "t.digest", where: sql`f.revoked_at < ${before}` }
    case "revokedSessions":
      return {
        from: sql`token_families f`,
        key: "f.revoked_at",
        id: "f.family_id",
        where: sql`f.revoked_at < ${before}`
      }
    case "expiredSessions":
      return {
        from: sql`token_families f`,
        key: "f.expires_at",
        id: "f.family_id",
        where: sql`f.expires_at < ${before}`
      }
    case "sealedSuccessors":
      return {
        from: sql`refresh_tokens t`,
        key: "t.rotated_at",
        id: "t.digest",
        where: sql`t.sealed_successor IS NOT NULL AND t.rotated_at < ${before}`
      }
  }
}

/** The family ended between the claim of its token and the update of the family: roll back. */
class FamilyEnded {
  readonly _tag = "FamilyEnded"
}

export const make = Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  const inTransaction = transaction(sql)

  const statement = rotationStatements(sql)
  const familyColumns = sql.literal(
    "family_id, user_id, ip_address, user_agent, created_at, last_used_at, expires_at, revoked_at"
  )
  const familiesOfRows = (rows: ReadonlyArray<unknown>) =>
    Effect.map(decodeFamilies(rows), (decoded) => decoded.map((row) => new TokenFamily(row, validated)))
  const exceptFamily = (except: Option.Option<FamilyId>) =>
    Option.match(except, { onNone: () => sql``, onSome: (familyId) => sql`AND family_id <> ${familyId}` })
  const insertToken = (token: StoredRefreshToken) => statement.insert(...tokenValues(token))

  return RefreshTokenRepo.of({
    startFamily: (family, first) =>
      inTransaction(
        Effect.zipRight(
          sql`INSERT INTO token_families
              (family_id, user_id, ip_address, user_agent, created_at, last_used_at, expires_at)
            VALUES (${family.family_id}, ${family.user_id}, ${family.ip_address}, ${family.user_agent},
              ${family.created_at.epochMillis}, ${family.last_used_at.epochMillis}, ${family.expires_at.epochMillis})`,
          insertToken(first)
        )
      ).pipe(
        Effect.asVoid,
        // The user was deleted between signing in and now: no session for nobody.
        Effect.catchTag(
          "SqlError",
          (error): Effect.Effect<never, UserNotFoundError | StoreUnavailableError> =>
            isForeignKeyViolation(error) ? Effect.fail(new UserNotFoundError()) : unavailable(Effect.fail(error))
        ),
        boundedCall
      ),

    findByDigest: (digest) =>
      sql`SELECT ${tokenWithFamilyColumns(sql)}
        FROM refresh_tokens t JOIN token_families f ON f.family_id = t.family_id
        WHERE t.digest = ${digest}`.pipe(Effect.flatMap(firstTokenWithFamily), unavailable),

    rotate: (rotation) =>
      sql
        .onDialectOrElse({
          // One round trip: the statements as one (rotation.ts), its own transaction.
          pg: () => oneStatementWon(rotationInOneStatement(sql)(...oneStatementValues(rotation))),
          orElse: () =>
            inTransaction(
              Effect.gen(function* () {
                const [claim, successor, touch] = rotationValues(rotation)
                const family = (yield* statement.claim(...claim))[0]?.family_id
                if (family === undefined) return false
                yield* statement.insert(...successor)
                const touched = yield* statement.touch(...touch, family)
                if (touched.length === 0) return yield* Effect.fail(new FamilyEnded())
                return true
              })
            ).pipe(Effect.catchTag("FamilyEnded", () => Effect.succeed(false)))
        })
        .pipe(unavailable),

    revokeFamily: (familyId, now) =>
      sql`UPDATE token_families SET revoked_at = ${now.epochMillis}
        WHERE family_id = ${familyId} AND revoked_at IS NULL RETURNING family_id`.pipe(
        Effect.map((rows) => rows.length > 0),
        unavailable
      ),

    // A batch's keys first, then the update of those still not ended: the keys read tell whether
    // any is left (fewer than `limit`: none), whatever a racing ending took of them meanwhile.
    endFamiliesOfUser: (userId, now, except, limit) =>
      Effect.gen(function* () {
        const keys = yield* sql<{ readonly family_id: string }>`SELECT family_id FROM token_families
          WHERE user_id = ${userId} AND revoked_at IS NULL ${exceptFamily(except)}
          LIMIT ${limit}`
        if (keys.length === 0) return { ended: 0, live: 0, done: true }
        const ended = yield* sql<{ readonly expires_at: number | string }>`UPDATE token_families
          SET revoked_at = ${now.epochMillis}
          WHERE family_id IN ${sql.in(keys.map((key) => key.family_id))} AND revoked_at IS NULL
          RETURNING expires_at`
        return {
          ended: ended.length,
          live: ended.filter((row) => Number(row.expires_at) > now.epochMillis).length,
          done: keys.length < limit
        }
      }).pipe(unavailable),

    // At most a thousand a sign-in: a limit both dialects accept before an OFFSET.
    endLeastRecentlyUsed: (userId, now, keep) =>
      sql<{ readonly family_id: string; readonly expires_at: number | string }>`UPDATE token_families
        SET revoked_at = ${now.epochMillis}
        WHERE revoked_at IS NULL AND family_id IN (SELECT family_id FROM token_families
          WHERE user_id = ${userId} AND revoked_at IS NULL
          ORDER BY last_used_at DESC, family_id DESC LIMIT 1000 OFFSET ${keep})
        RETURNING family_id, expires_at`.pipe(
        Effect.map((rows) =>
          rows.filter((row) => Number(row.expires_at) > now.epochMillis).map((row) => FamilyId.make(row.family_id))
        ),
        unavailable
      ),

    deleteOfUser: (userId, what, limit) =>
      (what === "tokens"
        ? sql`DELETE FROM refresh_tokens WHERE digest IN (SELECT t.digest
            FROM refresh_tokens t JOIN token_families f ON f.family_id = t.family_id
            WHERE f.user_id = ${userId} LIMIT ${limit}) RETURNING digest`
        : sql`DELETE FROM token_families WHERE family_id IN (SELECT family_id
            FROM token_families WHERE user_id = ${userId} LIMIT ${limit}) RETURNING family_id`
      ).pipe(
        Effect.map((rows) => rows.length),
        unavailable
      ),

    isEnded: (familyId) =>
      sql`SELECT revoked_at FROM token_families WHERE family_id = ${familyId}`.pipe(
        Effect.map((rows) => rows[0] === undefined || rows[0].revoked_at !== null),
        unavailable
      ),

    liveFamiliesOf: (userId, now, { limit, after, except }) =>
      sql`SELECT ${familyColumns} FROM token_families
        WHERE user_id = ${userId} AND revoked_at IS NULL AND expires_at > ${now.epochMillis}
          ${exceptFamily(except)}
          ${Option.match(after, {
            onNone: () => sql``,
            onSome: ({ last_used_at, family_id }) =>
              sql`AND (last_used_at, family_id) < (${last_used_at}, ${family_id})`
          })}
        ORDER BY last_used_at DESC, family_id DESC
        LIMIT ${limit}`.pipe(Effect.flatMap(familiesOfRows), unavailable),

    liveFamily: (userId, familyId, now) =>
      sql`SELECT ${familyColumns} FROM token_families
        WHERE family_id = ${familyId} AND user_id = ${userId}
          AND revoked_at IS NULL AND expires_at > ${now.epochMillis}`.pipe(
        Effect.flatMap(familiesOfRows),
        Effect.map((families) => Option.fromNullable(families[0])),
        unavailable
      ),

    // One batch: at most `limit` rows in the order of the step's key from where the last batch
    // reached, then the rows by their ids, so that no statement holds the store for longer than a
    // batch takes, and none walks again what an earlier batch deleted. The tokens of ended
    // sessions are looked for among the next `limit` sessions only (a window): sessions whose
    // tokens are gone already (expired, and swept) would otherwise be walked all in one statement.
    prune: (step, before, limit, from) => {
      const rule = prunable(sql, step, before.epochMillis)
      const key = sql.literal(rule.key)
      const change = (ids: ReadonlyArray<string | number>) =>
        step === "revokedSessions" || step === "expiredSessions"
          ? sql`DELETE FROM token_families WHERE family_id IN ${sql.in(ids)} RETURNING family_id`
          : step === "sealedSuccessors"
            ? sql`UPDATE refresh_tokens SET sealed_successor = NULL
                WHERE digest IN ${sql.in(ids)} AND sealed_successor IS NOT NULL RETURNING digest`
            : sql`DELETE FROM refresh_tokens WHERE digest IN ${sql.in(ids)} RETURNING digest`
      const ofSessions = step === "revokedSessionTokens"
      // The key of the window's last session, when `limit` sessions or more lie ahead.
      const windowEdge = ofSessions
        ? sql<{ readonly row_key: number | string }>`SELECT ${key} AS row_key FROM token_families f
            WHERE ${rule.where} AND ${key} >= ${from} ORDER BY ${key} LIMIT 1 OFFSET ${limit - 1}`.pipe(
            Effect.map((rows) => Option.map(Option.fromNullable(rows[0]), (row) => Number(row.row_key)))
          )
        : Effect.succeed(Option.none<number>())
      return Effect.gen(function* () {
        const edge = yield* windowEdge
        const within = Option.match(edge, { onNone: () => sql``, onSome: (upper) => sql`AND ${key} <= ${upper}` })
        const rows = yield* sql<KeyedRow>`SELECT ${sql.literal(rule.id)} AS row_id, ${key} AS row_key
          FROM ${rule.from} WHERE ${rule.where} AND ${key} >= ${from} ${within} ORDER BY ${key} LIMIT ${limit}`
        const batch = yield* keyedBatch(rows, from, change)
        // Every row of a window taken: the next batch starts past the window, however few it held.
        return Option.isSome(edge) && rows.length < limit
          ? { found: Math.max(batch.found, 1), done: batch.done, reached: edge.value + 1 }
          : batch
      }).pipe(unavailable)
    },

    pending: (cutoffs) => {
      const now = cutoffs.tokensExpiredBefore.epochMillis
      const ended = cutoffs.sessionsEndedBefore.epochMillis
      const sealed = cutoffs.sealedRotatedBefore.epochMillis
      const endedFamily = endedBefore(sql, ended)
      return sql<{ readonly tokens: number | string; readonly sealed: number | string }>`SELECT
          COALESCE(SUM(CASE WHEN t.expires_at < ${now} OR ${endedFamily} THEN 1 ELSE 0 END), 0) AS tokens,
          COALESCE(SUM(CASE WHEN t.expires_at >= ${now} AND NOT ${endedFamily}
            AND t.sealed_successor IS NOT NULL AND t.rotated_at < ${sealed} THEN 1 ELSE 0 END), 0) AS sealed
        FROM refresh_tokens t JOIN token_families f ON f.family_id = t.family_id`.pipe(
        Effect.zip(sql<{ readonly count: number | string }>`SELECT COUNT(*) AS count FROM token_families f
          WHERE ${endedFamily}`),
        Effect.map(([[tokens], [families]]) => ({
          refreshTokens: Number(tokens?.tokens ?? 0),
          sessions: Number(families?.count ?? 0),
          sealedSuccessors: Number(tokens?.sealed ?? 0)
        })),
        unavailable
      )
    },

    revokeFamilyOfUser: (userId, familyId, now) =>
      sql`UPDATE token_families SET revoked_at = ${now.epochMillis}
        WHERE family_id = ${familyId} AND user_id = ${userId}
          AND revoked_at IS NULL AND expires_at > ${now.epochMillis}
        RETURNING family_id`.pipe(
        Effect.map((rows) => rows.length > 0),
        unavailable
      )
  })
})

export const layer = Layer.effect(RefreshTokenRepo, make)
