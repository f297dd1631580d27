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
  )
}
