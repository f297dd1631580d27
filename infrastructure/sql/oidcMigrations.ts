import { Effect } from "effect"
import { migration } from "./migration.js"

/** The OpenID Provider's tables, after the accounts' (schemaMigrations.ts). */
export const oidcProviderMigrations = {
  // The clients of `portcullis client add`: secrets only as digests; lists as JSON text.
  "0015_oidc_clients": migration(
    (sql, type) =>
      sql`CREATE TABLE oidc_clients (
        client_id TEXT PRIMARY KEY,
        name TEXT NOT NULL,
        public ${type("falseByDefault")},
        first_party ${type("falseByDefault")},
        self_registered ${type("falseByDefault")},
        redirect_uris TEXT NOT NULL,
        post_logout_redirect_uris TEXT NOT NULL,
        scopes TEXT NOT NULL,
        grants TEXT NOT NULL,
        secret_digest TEXT,
        created_at ${type("millis")} NOT NULL
      )`
  ),
  // Authorization codes by digest, bound to what they were issued for; a code's row outlives its
  // redemption until it expires, so that a replay is told apart from an unknown code and ends the
  // grant the redemption started (family_id).
  "0016_oidc_codes": migration((sql, type) =>
    Effect.all(
      [
        sql`CREATE TABLE oidc_codes (
        digest TEXT PRIMARY KEY,
        client_id TEXT NOT NULL REFERENCES oidc_clients(client_id) ON DELETE CASCADE,
        user_id TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
        redirect_uri TEXT NOT NULL,
        code_challenge TEXT NOT NULL,
        scopes TEXT NOT NULL,
        nonce TEXT,
        auth_time ${type("integer")} NOT NULL,
        amr TEXT NOT NULL,
        expires_at ${type("millis")} NOT NULL,
        redeemed_at ${type("millis")},
        replayed_at ${type("millis")},
        family_id TEXT
      )`,
        sql`CREATE INDEX oidc_codes_expiry ON oidc_codes (expires_at)`
      ],
      { discard: true }
    )
  ),
  // What each user granted each client; withdrawn with DELETE /me/apps, gone with the user or client.
  "0017_oidc_consents": migration(
    (sql, type) =>
      sql`CREATE TABLE oidc_consents (
        user_id TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
        client_id TEXT NOT NULL REFERENCES oidc_clients(client_id) ON DELETE CASCADE,
        scopes TEXT NOT NULL,
        granted_at ${type("millis")} NOT NULL,
        PRIMARY KEY (user_id, client_id)
      )`
  ),
  // Authorization requests parked while the user signs in or consents (15 minutes), by the digest
  // of their id; gone with their client.
  "0018_oidc_requests": migration((sql, type) =>
    Effect.all(
      [
        sql`CREATE TABLE oidc_requests (
        digest TEXT PRIMARY KEY,
        client_id TEXT NOT NULL REFERENCES oidc_clients(client_id) ON DELETE CASCADE,
        request TEXT NOT NULL,
        parked_at ${type("millis")} NOT NULL,
        expires_at ${type("millis")} NOT NULL
      )`,
        sql`CREATE INDEX oidc_requests_expiry ON oidc_requests (expires_at)`
      ],
      { discard: true }
    )
  ),
  // Grants (what a user let a client do, apart from the sessions) and their refresh tokens by
  // digest; found by user (GET /me/apps, what ends them) and by end (the sweep).
  "0019_oidc_grants": migration((sql, type) =>
    Effect.all(
      [
        sql`CREATE TABLE oidc_grants (
        grant_id TEXT PRIMARY KEY,
        client_id TEXT NOT NULL REFERENCES oidc_clients(client_id) ON DELETE CASCADE,
        user_id TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
        scopes TEXT NOT NULL,
        auth_time ${type("integer")} NOT NULL,
        amr TEXT NOT NULL,
        created_at ${type("millis")} NOT NULL,
        last_used_at ${type("millis")} NOT NULL,
        expires_at ${type("millis")} NOT NULL,
        revoked_at ${type("millis")}
      )`,
        sql`CREATE INDEX oidc_grants_user ON oidc_grants (user_id, last_used_at)`,
        sql`CREATE INDEX oidc_grants_expiry ON oidc_grants (expires_at)`,
        sql`CREATE INDEX oidc_grants_revoked ON oidc_grants (revoked_at) WHERE revoked_at IS NOT NULL`,
        sql`CREATE TABLE oidc_refresh_tokens (
        digest TEXT PRIMARY KEY,
        grant_id TEXT NOT NULL REFERENCES oidc_grants(grant_id) ON DELETE CASCADE,
        issued_at ${type("millis")} NOT NULL,
        expires_at ${type("millis")} NOT NULL,
        rotated_at ${type("millis")}
      )`,
        sql`CREATE INDEX oidc_refresh_tokens_grant ON oidc_refresh_tokens (grant_id)`
      ],
      { discard: true }
    )
  ),
  // The resources of `portcullis resource add` (RFC 8707), by normalised URI; the resources each
  // code and grant was issued for, as JSON lists (none: tokens for the client itself).
  "0020_oidc_resources": migration((sql, type) =>
    Effect.all(
      [
        sql`CREATE TABLE oidc_resources (
        uri TEXT PRIMARY KEY,
        scopes TEXT NOT NULL,
        introspecting_client TEXT REFERENCES oidc_clients(client_id) ON DELETE SET NULL,
        created_at ${type("millis")} NOT NULL
      )`,
        sql`ALTER TABLE oidc_codes ADD COLUMN resources TEXT NOT NULL DEFAULT '[]'`,
        sql`ALTER TABLE oidc_grants ADD COLUMN resources TEXT NOT NULL DEFAULT '[]'`
      ],
      { discard: true }
    )
  ),
  // A client whose client_id is its metadata document's URL: when its stored copy must be fetched again.
  "0021_oidc_client_documents": migration(
    (sql, type) => sql`ALTER TABLE oidc_clients ADD COLUMN metadata_expires_at ${type("millis")}`
  )
}
