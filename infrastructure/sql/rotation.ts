import type * as SqlClient from "@effect/sql/SqlClient"
import { Effect, Option } from "effect"
import type { Rotation } from "../../application/ports/RefreshTokenRepo.js"
import type { StoredRefreshToken } from "../../domain/Session.js"

const nullable = Option.getOrNull

/**
 * A rotation's three statements, built with the client (and so for its dialect) over plain values,
 * one parameter each: the plain adapter runs them in a transaction of the client, the fast one
 * (fast/RefreshTokenRotationSqlite) prepares them once on a connection of its own.
 *
 * A compare-and-swap on both dialects. On PostgreSQL (READ COMMITTED) a racing claim of the same
 * token waits for the first one's transaction, then re-checks `rotated_at IS NULL` on the
 * committed row and claims nothing: exactly one winner. The family is touched under the same
 * re-check, so a session ended while the rotation ran makes it roll back and lose.
 */
export const rotationStatements = (sql: SqlClient.SqlClient) => ({
  claim: (rotatedAt: number, sealedSuccessor: string | null, presented: string) =>
    sql<{ readonly family_id: string }>`UPDATE refresh_tokens
      SET rotated_at = ${rotatedAt}, sealed_successor = ${sealedSuccessor}
      WHERE digest = ${presented} AND rotated_at IS NULL
        AND EXISTS (SELECT 1 FROM token_families f
          WHERE f.family_id = refresh_tokens.family_id AND f.revoked_at IS NULL)
      RETURNING family_id`,
  insert: (
    digest: string,
    familyId: string,
    issuedAt: number,
    expiresAt: number,
    rotatedAt: number | null,
    sealedSuccessor: string | null
  ) =>
    sql`INSERT INTO refresh_tokens (digest, family_id, issued_at, expires_at, rotated_at, sealed_successor)
      VALUES (${digest}, ${familyId}, ${issuedAt}, ${expiresAt}, ${rotatedAt}, ${sealedSuccessor})`,
  touch: (
    lastUsedAt: number,
    expiresAt: number,
    ipAddress: string | null,
    userAgent: string | null,
    familyId: string
  ) =>
    sql<{ readonly family_id: string }>`UPDATE token_families
      SET last_used_at = ${lastUsedAt}, expires_at = ${expiresAt},
        ip_address = COALESCE(${ipAddress}, ip_address), user_agent = COALESCE(${userAgent}, user_agent)
      WHERE family_id = ${familyId} AND revoked_at IS NULL
      RETURNING family_id`
})

/**
 * The rotation as one statement, for PostgreSQL: the three statements above as data-modifying
 * CTEs, one round trip and one transaction of their own, in the plain adapter's order (the
 * token's row, then the family's). The claim is the same compare-and-swap; the touch updates the
 * claimed token's family while it is live (re-checked on the committed row); the successor is
 * stored from a touched family. When the family was ended while the claim waited, the claim
 * holds and the touch does not: the statement then fails on purpose (a division by the touched
 * count, zero), so that PostgreSQL rolls all of it back and the rotation changes nothing, as the
 * plain adapter's rollback does; `oneStatementWon` reads what it answered.
 */
export const rotationInOneStatement =
  (sql: SqlClient.SqlClient) =>
  (
    rotatedAt: number,
    sealed: string | null,
    presented: string,
    lastUsedAt: number,
    familyExpiresAt: number,
    ipAddress: string | null,
    userAgent: string | null,
    digest: string,
    issuedAt: number,
    expiresAt: number,
    successorRotatedAt: number | null,
    successorSealed: string | null
  ) =>
    sql<{ readonly family_id: string }>`WITH claimed AS (
      UPDATE refresh_tokens SET rotated_at = ${rotatedAt}, sealed_successor = ${sealed}
      WHERE digest = ${presented} AND rotated_at IS NULL
        AND EXISTS (SELECT 1 FROM token_families f
          WHERE f.family_id = refresh_tokens.family_id AND f.revoked_at IS NULL)
      RETURNING family_id),
    touched AS (
      UPDATE token_families
      SET last_used_at = ${lastUsedAt}, expires_at = ${familyExpiresAt},
        ip_address = COALESCE(${ipAddress}, ip_address), user_agent = COALESCE(${userAgent}, user_agent)
      WHERE family_id IN (SELECT family_id FROM claimed) AND revoked_at IS NULL
      RETURNING family_id),
    stored AS (
      INSERT INTO refresh_tokens (digest, family_id, issued_at, expires_at, rotated_at, sealed_successor)
      SELECT ${digest}, family_id, ${issuedAt}, ${expiresAt}, ${successorRotatedAt}, ${successorSealed} FROM touched
      RETURNING family_id)
    SELECT family_id, 1 / (SELECT count(*) FROM touched) AS touched FROM claimed`

/** A rotation's values, as `rotationInOneStatement` takes them (the successor's family is the claim's). */
export const oneStatementValues = (rotation: Rotation) => {
  const [claim, successor, touch] = rotationValues(rotation)
  const [digest, , issuedAt, expiresAt, successorRotatedAt, successorSealed] = successor
  return [...claim, ...touch, digest, issuedAt, expiresAt, successorRotatedAt, successorSealed] as const
}

/** The failure `rotationInOneStatement` raises on purpose: the family ended while the claim waited. */
const rotationEndedMeanwhile = (error: { readonly cause?: unknown }): boolean =>
  (error.cause as { readonly code?: unknown } | undefined)?.code === "22012"

/**
 * Whether `rotationInOneStatement`, run, won: its one row, a rotation done; no row, a claim lost
 * to another rotation; its failure on purpose, a family ended meanwhile (lost, nothing changed).
 */
export const oneStatementWon = <E extends { readonly _tag: string; readonly cause?: unknown }, R>(
  run: Effect.Effect<ReadonlyArray<unknown>, E, R>
): Effect.Effect<boolean, E, R> =>
  run.pipe(
    Effect.map((claimed) => claimed.length === 1),
    Effect.catchIf(
      (error) => error._tag === "SqlError" && rotationEndedMeanwhile(error),
      () => Effect.succeed(false)
    )
  )

/** A stored token's values, as `insert` takes them. */
export const tokenValues = (token: StoredRefreshToken) =>
  [
    token.digest,
    token.family_id,
    token.issued_at.epochMillis,
    token.expires_at.epochMillis,
    nullable(Option.map(token.rotated_at, (at) => at.epochMillis)),
    nullable(token.sealed_successor)
  ] as const

/**
 * A rotation's values: the claim's, the successor's, and the touch's but for the family, which the
 * claim answers. A part of the client that is null keeps what the family recorded before.
 */
export const rotationValues = ({ presented, successor, sealedSuccessor, now, client }: Rotation) =>
  [
    [now.epochMillis, nullable(sealedSuccessor), presented] as const,
    tokenValues(successor),
    [now.epochMillis, successor.expires_at.epochMillis, client?.ip_address ?? null, client?.user_agent ?? null] as const
  ] as const
