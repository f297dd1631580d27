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
  databaseUrl: read.setting("DATABASE_URL", databaseUrl, { kind: "sqlite", filename: "./data/portcullis.db" }),
  /** Revocations, rate limits, lockout (and passkey challenges) shared by every worker. */
  redisUrl: read
    .optional("REDIS_URL", F.url("redis:", "rediss:"), { secret: true })
    .pipe(Option.map((value) => Redacted.make(value.href))),
  userIdType: read.setting("USER_ID_TYPE", F.oneOf("uuid", "integer", "string"), "uuid"),
  /** How long one call to the database or Redis may take before the request answers 503. */
  storeTimeoutSeconds: read.setting("STORE_TIMEOUT_SECONDS", F.int(1, 60), 5)
})

export type StorageSettings = ReturnType<typeof readStorage>
