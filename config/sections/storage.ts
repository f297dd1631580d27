import { Either, Option, Redacted } from "effect"
import * as F from "../forms.js"
import type { SettingsReader } from "../reader.js"

export type DatabaseUrl =
  | { readonly kind: "memory" }
  | { readonly kind: "sqlite"; readonly filename: string }
  | { readonly kind: "postgres"; readonly url: Redacted.Redacted<string> }

const databaseUrl: F.Form<DatabaseUrl> = {
  expected: "memory:, sqlite:<path>, sqlite::memory: or postgres://…",
  read: (raw) => {
    const value = raw.trim()
    if (value === "memory:") return Either.right({ kind: "memory" })
    if (value.startsWith("sqlite:")) {
      const filename = value.slice("sqlite:".length)
      return filename === "" ? Either.left("names no file") : Either.right({ kind: "sqlite", filename })
    }
    if (/^postgres(ql)?:\/\//.test(value)) return Either.right({ kind: "postgres", url: Redacted.make(value) })
    return Either.left("is not a database URL")
  },
  show: (database) =>
    database.kind === "memory"
      ? "memory:"
      : database.kind === "sqlite"
        ? `sqlite:${database.filename}`
        : Redacted.value(database.url)
}

/** Whether every process of the service sees the same records (several workers need one). */
export const isShared = (database: DatabaseUrl) =>
  database.kind === "postgres" || (database.kind === "sqlite" && database.filename !== ":memory:")

/** Where records and shared state live: the database, Redis, and the form of user ids. */
export const readStorage = (read: SettingsReader) => ({
  databaseUrl: read.setting(
    "DATABASE_URL",
    databaseUrl,
    { kind: "sqlite", filename: "./data/portcullis.db" },
    {
      doc: "Where records live: `sqlite:<path>`, `sqlite::memory:` or `memory:` (the same: nothing kept past the process; tests and try-outs), or `postgres://user:password@host:5432/db` (also `postgresql://`).",
      shownDefault: "sqlite:./data/portcullis.db"
    }
  ),
  /** Revocations, rate limits, lockout (and passkey challenges) shared by every worker. */
  redisUrl: read
    .optional("REDIS_URL", F.url("redis:", "rediss:"), {
      secret: true,
      doc: "Redis for rate limits, lockout counters, revocations and single-use tokens, under `portcullis:`; needed by several workers. Must answer when `serve` starts. A cache: losing it never reopens a closed door (rate limits and lockout then count in each process)."
    })
    .pipe(Option.map((value) => Redacted.make(value.href))),
  userIdType: read.setting("USER_ID_TYPE", F.oneOf("uuid", "integer", "string"), "uuid", {
    doc: "The form of new user ids: `uuid` (v7, a JSON string); `integer` (numbered by the store, never reused, a JSON number); `string` (22 random base64url characters). The JWT `sub` is always the id as a string. Choose it before the first user: ids already stored keep their form."
  }),
  /** How long one call to the database or Redis may take before the request answers 503. */
  storeTimeoutSeconds: read.setting("STORE_TIMEOUT_SECONDS", F.int(1, 60), 5, {
    doc: "How long one PostgreSQL or Redis call may take before the request answers 503. SQLite calls run on the event loop, where no timer can cut them short, so they are not bounded."
  }),
  /** Audit events older than this many days are deleted by the sweeps. */
  auditRetentionDays: read.setting("AUDIT_RETENTION_DAYS", F.int(1, 36500), 90, {
    doc: "Audit events older than this many days are deleted by the sweeps (PRUNE_INTERVAL_SECONDS)."
  }),
  /** Seconds between two sweeps of what has outlived its purpose (docs/operating.md, "Data over time"). */
  pruneIntervalSeconds: read.setting("PRUNE_INTERVAL_SECONDS", F.int(10, 86400), 600, {
    doc: "Seconds between two sweeps of a serving process, the first once it listens: expired refresh tokens, sessions ended longer than an access token lives, sealed successors past the reuse grace window, audit events past AUDIT_RETENTION_DAYS, in batches of 1,000 rows. `portcullis prune` runs one sweep."
  })
})

export type StorageSettings = ReturnType<typeof readStorage>
