import * as SqlClient from "@effect/sql/SqlClient"
import { type DateTime, Effect, Layer, Option, Schema } from "effect"
import { OidcClients, type StoredClient } from "../../application/ports/OidcClients.js"
import { ClientId } from "../../domain/oidc/Client.js"
import { countOf, SqlBoolean, SqlMillis } from "./columns.js"
import { isUniqueViolation, unavailable } from "./failures.js"

const Texts = Schema.parseJson(Schema.Array(Schema.String))

const Row = Schema.Struct({
  client_id: ClientId,
  name: Schema.String,
  public: SqlBoolean,
  first_party: SqlBoolean,
  self_registered: SqlBoolean,
  redirect_uris: Texts,
  post_logout_redirect_uris: Texts,
  scopes: Texts,
  grants: Schema.parseJson(Schema.Array(Schema.Literal("authorization_code", "client_credentials"))),
  secret_digest: Schema.NullOr(Schema.String),
  created_at: SqlMillis,
  metadata_expires_at: Schema.optionalWith(Schema.NullOr(SqlMillis), { exact: true })
})
const decodeStored = Schema.decodeUnknown(Schema.Array(Row))
/** The clients as stored: `metadata_expires_at` only on a metadata document's client. */
const decodeRows = (rows: unknown) =>
  Effect.map(decodeStored(rows), (clients) =>
    clients.map(({ metadata_expires_at, ...client }) =>
      metadata_expires_at === null || metadata_expires_at === undefined ? client : { ...client, metadata_expires_at }
    )
  )

const columnList = `client_id, name, public, first_party, self_registered, redirect_uris,
    post_logout_redirect_uris, scopes, grants, secret_digest, created_at, metadata_expires_at`

/**
 * The read of one client, every token request's first: the plain adapter runs it through the
 * client, the fast ones (fast/OidcClients*Reader) run it on SQLite's reading connection or named on PostgreSQL.
 */
export const readStatements = (sql: SqlClient.SqlClient) => ({
  find: (clientId: string) => sql`SELECT ${sql.literal(columnList)} FROM oidc_clients WHERE client_id = ${clientId}`
})

/** The client the rows of `find` hold, if any. */
export const clientOfRows = (rows: unknown) =>
  Effect.map(decodeRows(rows), (clients) => Option.fromNullable(clients[0]))

/** The provider's clients in `oidc_clients`; lists are JSON text, alike on SQLite and PostgreSQL. */
export const make = Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  const flag = (value: boolean) => sql.onDialectOrElse({ pg: () => value, orElse: () => (value ? 1 : 0) })
  const columns = sql.literal(columnList)
  const reads = readStatements(sql)

  /** The self-registered clients idle since `since`: added before it, and no grant of theirs used since. */
  const idle = (since: DateTime.Utc) =>
    sql`SELECT c.client_id FROM oidc_clients c WHERE c.self_registered = ${flag(true)}
      AND c.created_at < ${since.epochMillis}
      AND NOT EXISTS (SELECT 1 FROM oidc_grants g WHERE g.client_id = c.client_id AND g.last_used_at >= ${since.epochMillis})
      ORDER BY c.created_at`

  return OidcClients.of({
    add: (client: StoredClient) =>
      sql`INSERT INTO oidc_clients (client_id, name, public, first_party, self_registered, redirect_uris,
          post_logout_redirect_uris, scopes, grants, secret_digest, created_at)
        VALUES (${client.client_id}, ${client.name}, ${flag(client.public)}, ${flag(client.first_party)},
          ${flag(client.self_registered)}, ${JSON.stringify(client.redirect_uris)},
          ${JSON.stringify(client.post_logout_redirect_uris)}, ${JSON.stringify(client.scopes)},
          ${JSON.stringify(client.grants)}, ${client.secret_digest}, ${client.created_at.epochMillis})`.pipe(
        Effect.as(true),
        Effect.catchIf(isUniqueViolation, () => Effect.succeed(false)),
        unavailable
      ),

    putDocumentClient: (client) =>
      sql`INSERT INTO oidc_clients (client_id, name, public, first_party, self_registered, redirect_uris,
          post_logout_redirect_uris, scopes, grants, secret_digest, created_at, metadata_expires_at)
        VALUES (${client.client_id}, ${client.name}, ${flag(true)}, ${flag(false)}, ${flag(true)},
          ${JSON.stringify(client.redirect_uris)}, ${JSON.stringify(client.post_logout_redirect_uris)}, '[]',
          '["authorization_code"]', NULL, ${client.created_at.epochMillis}, ${client.metadata_expires_at?.epochMillis ?? null})
        ON CONFLICT (client_id) DO UPDATE SET name = excluded.name, redirect_uris = excluded.redirect_uris,
          post_logout_redirect_uris = excluded.post_logout_redirect_uris,
          metadata_expires_at = excluded.metadata_expires_at`.pipe(Effect.asVoid, unavailable),

    find: (clientId) => reads.find(clientId).pipe(Effect.flatMap(clientOfRows), unavailable),

    all: sql`SELECT ${columns} FROM oidc_clients ORDER BY created_at, client_id`.pipe(
      Effect.flatMap(decodeRows),
      unavailable
    ),

    remove: (clientId) =>
      sql<{ readonly client_id: string }>`DELETE FROM oidc_clients WHERE client_id = ${clientId}
        RETURNING client_id`.pipe(
        Effect.map((rows) => rows.length > 0),
        unavailable
      ),

    deleteIdle: (since, limit) =>
      sql<{ readonly client_id: string }>`DELETE FROM oidc_clients WHERE client_id IN (${idle(since)} LIMIT ${limit})
        RETURNING client_id`.pipe(
        Effect.map((rows) => rows.length),
        unavailable
      ),

    countIdle: (since) =>
      sql`SELECT COUNT(*) AS n FROM (${idle(since)}) idle`.pipe(Effect.flatMap(countOf), unavailable),

    replaceSecret: (clientId, secretDigest) =>
      sql<{ readonly client_id: string }>`UPDATE oidc_clients SET secret_digest = ${secretDigest}
        WHERE client_id = ${clientId} AND secret_digest IS NOT NULL RETURNING client_id`.pipe(
        Effect.map((rows) => rows.length > 0),
        unavailable
      )
  })
})

export const layer = Layer.effect(OidcClients, make)
