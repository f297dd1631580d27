import * as Migrator from "@effect/sql/Migrator"
import { Effect } from "effect"
import { migration } from "./migration.js"
import { oidcProviderMigrations } from "./oidcMigrations.js"

/** Users, sessions, their ways in, roles, the audit log and webhooks. */
const accountMigrations = {
  "0001_users_and_sessions": migration((sql, type) =>
    sql`
      CREATE TABLE users (
        id TEXT PRIMARY KEY NOT NULL,
        email TEXT NOT NULL UNIQUE,
        hashed_password TEXT,
        is_active ${type("trueByDefault")},
        is_verified ${type("falseByDefault")},
        is_superuser ${type("falseByDefault")},
        created_at ${type("millis")} NOT NULL
      )`.pipe(
      Effect.zipRight(sql`CREATE TABLE user_roles (
        user_id TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
        role TEXT NOT NULL,
        PRIMARY KEY (user_id, role)
      )`),
      Effect.zipRight(sql`CREATE TABLE token_families (
        family_id TEXT PRIMARY KEY NOT NULL,
        user_id TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
        ip_address TEXT,
        user_agent TEXT,
        created_at ${type("millis")} NOT NULL,
        last_used_at ${type("millis")} NOT NULL,
        expires_at ${type("millis")} NOT NULL,
        revoked_at ${type("millis")}
      )`),
      Effect.zipRight(sql`CREATE INDEX token_families_user ON token_families (user_id)`),
      Effect.zipRight(
        sql`CREATE INDEX token_families_revoked ON token_families (revoked_at) WHERE revoked_at IS NOT NULL`
      ),
      Effect.zipRight(sql`CREATE TABLE refresh_tokens (
        digest TEXT PRIMARY KEY NOT NULL,
        family_id TEXT NOT NULL REFERENCES token_families(family_id) ON DELETE CASCADE,
        issued_at ${type("millis")} NOT NULL,
        expires_at ${type("millis")} NOT NULL,
        rotated_at ${type("millis")},
        sealed_successor TEXT
      )`),
      Effect.zipRight(sql`CREATE INDEX refresh_tokens_family ON refresh_tokens (family_id)`)
    )
  ),
  // Roles are created on first use; the ones already held by users are registered here.
  "0002_role_permissions": migration((sql) =>
    sql`CREATE TABLE roles (name TEXT PRIMARY KEY NOT NULL)`.pipe(
      Effect.zipRight(sql`INSERT INTO roles (name) SELECT DISTINCT role FROM user_roles`),
      Effect.zipRight(sql`CREATE TABLE role_permissions (
        role TEXT NOT NULL REFERENCES roles(name) ON DELETE CASCADE,
        permission TEXT NOT NULL,
        PRIMARY KEY (role, permission)
      )`)
    )
  ),
  // A deployment's custom user fields, as one JSON object per user (config/Deployment.ts).
  "0003_user_fields": migration((sql, type) => sql`ALTER TABLE users ADD COLUMN fields ${type("emptyObject")}`),
  // USER_ID_TYPE=integer: users.id stays TEXT (decimal text for integer ids), numbered from this
  // counter, which never goes back, so a deleted user's id is never given to another.
  "0004_user_id_sequence": migration((sql, type) =>
    sql`CREATE TABLE id_sequences (name TEXT PRIMARY KEY NOT NULL, last_value ${type("integer")} NOT NULL)`.pipe(
      Effect.zipRight(
        sql.onDialectOrElse({
          pg: () => sql`INSERT INTO id_sequences (name, last_value)
            SELECT 'users', COALESCE(MAX(CAST(id AS NUMERIC)), 0) FROM users WHERE id ~ '^[1-9][0-9]*$'`,
          orElse: () => sql`INSERT INTO id_sequences (name, last_value)
            SELECT 'users', COALESCE(MAX(CAST(id AS INTEGER)), 0) FROM users
            WHERE id GLOB '[1-9]*' AND id NOT GLOB '*[^0-9]*'`
        })
      )
    )
  ),
  // Linked provider accounts. The unique pairs are the rules themselves (a provider account has
  // one user, a user one account per provider), so racing links cannot both win; the second
  // also serves a user's lookups.
  "0005_oauth_accounts": migration(
    (sql, type) =>
      sql`CREATE TABLE oauth_accounts (
      id TEXT PRIMARY KEY NOT NULL,
      provider TEXT NOT NULL,
      provider_user_id TEXT NOT NULL,
      user_id TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
      provider_email TEXT,
      access_token TEXT,
      refresh_token TEXT,
      expires_at ${type("millis")},
      created_at ${type("millis")} NOT NULL,
      UNIQUE (provider, provider_user_id),
      UNIQUE (user_id, provider)
    )`
  ),
  // A credential id belongs to one passkey across all users, never moved; its unique index also
  // serves the sign-in's lookup, as passkeys_user serves the list.
  "0006_passkeys": migration((sql, type) =>
    sql`CREATE TABLE passkeys (
      id TEXT PRIMARY KEY NOT NULL,
      user_id TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
      credential_id TEXT NOT NULL UNIQUE,
      public_key TEXT NOT NULL,
      sign_count ${type("integer")} NOT NULL,
      transports ${type("emptyList")},
      backed_up ${type("falseByDefault")},
      device_name TEXT NOT NULL,
      created_at ${type("millis")} NOT NULL,
      last_used_at ${type("millis")}
    )`.pipe(Effect.zipRight(sql`CREATE INDEX passkeys_user ON passkeys (user_id)`))
  ),
  // Security events. No reference to users: a deleted user's history stays. The indexes serve
  // the newest-first reads by user and by type, and the retention sweep by time.
  "0007_audit_events": migration((sql, type) =>
    sql`CREATE TABLE audit_events (
      id ${type("ascendingKey")},
      occurred_at ${type("millis")} NOT NULL,
      event_type TEXT NOT NULL,
      user_id TEXT,
      actor_kind TEXT NOT NULL,
      actor_id TEXT,
      ip_address TEXT,
      user_agent TEXT,
      details ${type("emptyObject")}
    )`.pipe(
      Effect.zipRight(sql`CREATE INDEX audit_events_user ON audit_events (user_id, id)`),
      Effect.zipRight(sql`CREATE INDEX audit_events_type ON audit_events (event_type, id)`),
      Effect.zipRight(sql`CREATE INDEX audit_events_time ON audit_events (occurred_at)`)
    )
  ),
  // Ways in (domain/WaysIn.ts): changed by every change of a user's ways in, compared by every
  // sign-in in the transaction that writes its session.
  "0008_credential_version": migration(
    (sql, type) => sql`ALTER TABLE users ADD COLUMN credential_version ${type("integer")} NOT NULL DEFAULT 0`
  ),
  // Data over time (domain/Retention.ts): each sweep's step finds its rows through an index, a
  // user's live sessions are read without their ended ones, and users are listed by keyset.
  "0009_retention_indexes": migration((sql) =>
    sql`CREATE INDEX refresh_tokens_expiry ON refresh_tokens (expires_at)`.pipe(
      Effect.zipRight(
        sql`CREATE INDEX refresh_tokens_sealed ON refresh_tokens (rotated_at) WHERE sealed_successor IS NOT NULL`
      ),
      Effect.zipRight(sql`CREATE INDEX token_families_expiry ON token_families (expires_at)`),
      Effect.zipRight(
        sql`CREATE INDEX token_families_live ON token_families (user_id, last_used_at) WHERE revoked_at IS NULL`
      ),
      Effect.zipRight(sql`CREATE INDEX users_created ON users (created_at, id)`)
    )
  ),
  // `user list --email` is a prefix search. SQLite's own email index serves it as a range of
  // the binary order; PostgreSQL's orders by the database's collation, where LIKE 'x%' needs an
  // index of its own, by code point.
  "0010_email_prefix_index": migration((sql) =>
    sql.onDialectOrElse({
      pg: () => sql`CREATE INDEX users_email_prefix ON users (email text_pattern_ops)`,
      orElse: () => Effect.void
    })
  ),
  // Sign-in by mail (domain/EmailSignIn.ts): one request per address, found by its link's
  // digest, swept once expired. No reference to users: a sign-up request has no user yet.
  "0011_email_sign_in_requests": migration((sql, type) =>
    sql`CREATE TABLE email_sign_in_requests (
      email TEXT PRIMARY KEY,
      token_digest TEXT NOT NULL UNIQUE,
      code_digest TEXT NOT NULL,
      fields ${type("emptyObject")},
      attempts ${type("integer")} NOT NULL DEFAULT 0,
      created_at ${type("millis")} NOT NULL,
      expires_at ${type("millis")} NOT NULL
    )`.pipe(Effect.zipRight(sql`CREATE INDEX email_sign_in_requests_expiry ON email_sign_in_requests (expires_at)`))
  ),
  // Webhooks (application/ports/Outbox.ts): a message a row, written with the change it reports.
  // The pending ones are found by their next try and by their user's queue to an endpoint; the
  // delivered and the dead by the time the sweep keys them by.
  "0012_webhook_outbox": migration((sql, type) =>
    sql`CREATE TABLE webhook_outbox (
      seq ${type("ascendingKey")},
      id TEXT NOT NULL UNIQUE,
      endpoint TEXT NOT NULL,
      user_id TEXT,
      type TEXT NOT NULL,
      body TEXT NOT NULL,
      created_at ${type("millis")} NOT NULL,
      attempts ${type("integer")} NOT NULL DEFAULT 0,
      next_attempt_at ${type("millis")} NOT NULL,
      claim TEXT,
      claimed_until ${type("millis")},
      delivered_at ${type("millis")},
      dead_at ${type("millis")},
      last_error TEXT
    )`.pipe(
      Effect.zipRight(
        sql`CREATE INDEX webhook_outbox_due ON webhook_outbox (next_attempt_at)
          WHERE delivered_at IS NULL AND dead_at IS NULL`
      ),
      Effect.zipRight(
        sql`CREATE INDEX webhook_outbox_queue ON webhook_outbox (endpoint, user_id, seq)
          WHERE delivered_at IS NULL AND dead_at IS NULL`
      ),
      Effect.zipRight(
        sql`CREATE INDEX webhook_outbox_delivered ON webhook_outbox (delivered_at) WHERE delivered_at IS NOT NULL`
      ),
      Effect.zipRight(sql`CREATE INDEX webhook_outbox_dead ON webhook_outbox (dead_at) WHERE dead_at IS NOT NULL`)
    )
  ),
  // Endpoints added by `portcullis webhook add`; their secrets sealed under SECRET_KEY.
  "0013_webhook_endpoints": migration(
    (sql, type) =>
      sql`CREATE TABLE webhook_endpoints (
        id TEXT PRIMARY KEY,
        url TEXT NOT NULL UNIQUE,
        sealed_secret TEXT NOT NULL,
        events TEXT NOT NULL,
        created_at ${type("millis")} NOT NULL
      )`
  ),
  // Address changes (application/ports/AddressChanges.ts): one pending change a user, found by
  // either link's digest; the undos of changes made, whose old address stays reserved while they
  // last, found by that address. Both found by expiry for the sweep.
  "0014_email_changes": migration((sql, type) =>
    Effect.all(
      [
        sql`CREATE TABLE email_changes (
        user_id TEXT PRIMARY KEY REFERENCES users(id) ON DELETE CASCADE,
        new_email TEXT NOT NULL,
        family_id TEXT NOT NULL,
        credential_version ${type("integer")} NOT NULL,
        new_token_digest TEXT NOT NULL UNIQUE,
        current_token_digest TEXT UNIQUE,
        new_confirmed ${type("falseByDefault")},
        current_confirmed ${type("falseByDefault")},
        created_at ${type("millis")} NOT NULL,
        expires_at ${type("millis")} NOT NULL
      )`,
        sql`CREATE INDEX email_changes_expiry ON email_changes (expires_at)`,
        sql`CREATE TABLE email_change_undos (
        token_digest TEXT PRIMARY KEY,
        user_id TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
        old_email TEXT NOT NULL,
        new_email TEXT NOT NULL,
        changed_at ${type("millis")} NOT NULL,
        expires_at ${type("millis")} NOT NULL
      )`,
        sql`CREATE INDEX email_change_undos_old_email ON email_change_undos (old_email, expires_at)`,
        sql`CREATE INDEX email_change_undos_user ON email_change_undos (user_id)`,
        sql`CREATE INDEX email_change_undos_expiry ON email_change_undos (expires_at)`
      ],
      { discard: true }
    )
  )
}

/**
 * Forward-only migrations, the same ids and meaning on SQLite and PostgreSQL, applied in order
 * at start-up and by `portcullis migrate`. Every lookup path has an index: user_roles and
 * role_permissions by their primary keys, the rest below.
 */
export const loader = Migrator.fromRecord({ ...accountMigrations, ...oidcProviderMigrations })
