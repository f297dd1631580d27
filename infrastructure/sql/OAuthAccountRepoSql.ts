import * as SqlClient from "@effect/sql/SqlClient"
import type { Fragment } from "@effect/sql/Statement"
import { DateTime, Effect, Layer, Option, Schema } from "effect"
import { v7 as uuidv7 } from "uuid"
import { OAuthAccountRepo } from "../../application/ports/OAuthAccountRepo.js"
import { OAuthAccountAlreadyLinkedError, OAuthProviderAlreadyLinkedError } from "../../domain/errors.js"
import { LinkedAccount, LinkedAccountId } from "../../domain/OAuth.js"
import { validated } from "../../domain/validated.js"
import { SqlInt, SqlMillis } from "./columns.js"
import { unavailable } from "./failures.js"

/** An oauth_accounts row: the domain's LinkedAccount with times as epoch milliseconds. */
const AccountRow = Schema.Struct({
  ...LinkedAccount.fields,
  expires_at: Schema.OptionFromNullOr(SqlMillis),
  created_at: SqlMillis
})
const decodeAccounts = Schema.decodeUnknown(Schema.Array(AccountRow))
const decodeCount = Schema.decodeUnknown(Schema.Tuple(Schema.Struct({ n: SqlInt })))

const nullable = Option.getOrNull

export const make = Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  const columns = sql.literal(
    "id, provider, provider_user_id, user_id, provider_email, access_token, refresh_token, expires_at, created_at"
  )
  const toAccounts = (rows: ReadonlyArray<unknown>) =>
    Effect.map(decodeAccounts(rows), (decoded) => decoded.map((row) => new LinkedAccount(row, validated)))
  const select = (where: Fragment) =>
    sql`SELECT ${columns} FROM oauth_accounts WHERE ${where}`.pipe(Effect.flatMap(toAccounts))
  const one = (where: Fragment) =>
    select(where).pipe(
      Effect.map((accounts) => Option.fromNullable(accounts[0])),
      unavailable
    )
  const byProviderAccount = (provider: string, providerUserId: string) =>
    one(sql`provider = ${provider} AND provider_user_id = ${providerUserId}`)
  // Provider names in code-unit order on both dialects, whatever PostgreSQL's collation.
  const byProvider = sql.onDialectOrElse({
    pg: () => sql`ORDER BY provider COLLATE "C"`,
    orElse: () => sql`ORDER BY provider`
  })

  return OAuthAccountRepo.of({
    // No check before the insert: the unique constraints refuse the loser of a race, quietly,
    // and only then is the conflict told apart. A PostgreSQL insert that meets an uncommitted
    // duplicate waits for it, so the row it conflicted with is there to be found.
    link: (fields) =>
      Effect.gen(function* () {
        const account = new LinkedAccount({
          ...fields,
          id: LinkedAccountId.make(uuidv7()),
          created_at: yield* DateTime.now
        })
        const inserted = yield* sql`INSERT INTO oauth_accounts (${columns})
          VALUES (${account.id}, ${account.provider}, ${account.provider_user_id}, ${account.user_id},
            ${nullable(account.provider_email)}, ${nullable(account.access_token)}, ${nullable(account.refresh_token)},
            ${nullable(Option.map(account.expires_at, DateTime.toEpochMillis))}, ${account.created_at.epochMillis})
          ON CONFLICT DO NOTHING RETURNING id`.pipe(unavailable)
        if (inserted.length > 0) return account
        const taken = yield* byProviderAccount(fields.provider, fields.provider_user_id)
        return yield* Effect.fail(
          Option.isSome(taken) ? new OAuthAccountAlreadyLinkedError() : new OAuthProviderAlreadyLinkedError()
        )
      }),

    findByProviderAccount: byProviderAccount,

    listOf: (userId) => select(sql`user_id = ${userId} ${byProvider}`).pipe(unavailable),

    findOf: (userId, provider) => one(sql`user_id = ${userId} AND provider = ${provider}`),

    updateTokens: (id, tokens) =>
      sql`UPDATE oauth_accounts SET provider_email = ${nullable(tokens.provider_email)},
          access_token = ${nullable(tokens.access_token)},
          refresh_token = COALESCE(${nullable(tokens.refresh_token)}, refresh_token),
          expires_at = ${nullable(Option.map(tokens.expires_at, DateTime.toEpochMillis))}
        WHERE id = ${id} RETURNING ${columns}`.pipe(
        Effect.flatMap(toAccounts),
        Effect.map((accounts) => Option.fromNullable(accounts[0])),
        unavailable
      ),

    unlink: (userId, provider) =>
      sql`DELETE FROM oauth_accounts WHERE user_id = ${userId} AND provider = ${provider} RETURNING id`.pipe(
        Effect.map((rows) => rows.length > 0),
        unavailable
      ),

    countOf: (userId) =>
      sql`SELECT COUNT(*) AS n FROM oauth_accounts WHERE user_id = ${userId}`.pipe(
        Effect.flatMap(decodeCount),
        Effect.map(([row]) => row.n),
        unavailable
      )
  })
})

export const layer = Layer.effect(OAuthAccountRepo, make)
