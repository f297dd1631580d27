import { Option, Redacted } from "effect"
import { PREFIX } from "../config/reader.js"
import type { Settings } from "../config/Settings.js"
import type { DatabaseUrl } from "../config/sections/storage.js"
import { StartupError } from "../interfaces/cli/startup.js"

/** The fields of the start-up failures told here; everything else is told by its message. */
interface Failure {
  readonly _tag?: unknown
  readonly message?: unknown
  readonly cause?: unknown
}

const messageOf = (value: unknown): string | undefined =>
  value instanceof Error || (typeof value === "object" && value !== null && "message" in value)
    ? String((value as Failure).message)
    : undefined

/** A field of a system error (`code`, `port`), if it has it. */
const fieldOf = (value: unknown, field: string): unknown =>
  typeof value === "object" && value !== null && field in value ? (value as Record<string, unknown>)[field] : undefined

/** What to do about the listen errors an operator meets, by the system's code; `port` names the port's setting. */
const listenFaults = (port: string): Record<string, string> => ({
  EADDRINUSE: `the address is already in use; stop what listens there or choose another ${PREFIX}${port}`,
  EACCES: `permission denied (ports below 1024 need privileges); choose another ${PREFIX}${port}`,
  EADDRNOTAVAIL: `the address is not one of this machine's; choose another ${PREFIX}HOST`,
  ENOTFOUND: `the host name does not resolve; choose another ${PREFIX}HOST`
})

/** The refused listen, by the address the system names: the API's port or the metrics' own. */
const listenSentence = (settings: Settings, cause: unknown) => {
  const { host } = settings.server
  const port = Number(fieldOf(cause, "port") ?? settings.server.port)
  const setting =
    port !== settings.server.port && Option.contains(settings.observability.metricsPort, port) ? "METRICS_PORT" : "PORT"
  const fault =
    listenFaults(setting)[String(fieldOf(cause, "code"))] ?? messageOf(cause) ?? "the server refused to start"
  return `Cannot listen on ${host}:${port}: ${fault}.`
}

/** URL.parse arrived in Node 22. */
const parsedUrl = (text: string): URL | undefined => {
  try {
    return new URL(text)
  } catch {
    return undefined
  }
}

/** Where DATABASE_URL points, as it may be shown: host, port and database, never credentials. */
const shownDatabase = (url: DatabaseUrl) => {
  switch (url.kind) {
    case "memory":
      return "memory:"
    case "sqlite":
      return `sqlite:${url.filename}`
    case "postgres": {
      const parsed = parsedUrl(Redacted.value(url.url))
      return parsed === undefined ? "postgres://…" : `postgres://${parsed.host}${parsed.pathname}`
    }
  }
}

/** Where REDIS_URL points, as it may be shown: scheme, host and port, never credentials. */
const shownRedis = (url: Redacted.Redacted<string>) => {
  const parsed = parsedUrl(Redacted.value(url))
  return parsed === undefined ? "redis://…" : `${parsed.protocol}//${parsed.host}`
}

/** A driver's message with the database password masked, should a driver ever repeat it. */
const withoutPassword = (text: string, url: DatabaseUrl) =>
  url.kind === "postgres" ? withoutPasswordOf(text, url.url) : text

/** A driver's message with the password of `url` masked, should a driver ever repeat it. */
const withoutPasswordOf = (text: string, url: Redacted.Redacted<string>) => {
  const password = parsedUrl(Redacted.value(url))?.password ?? ""
  if (password === "") return text
  let decoded = password
  try {
    decoded = decodeURIComponent(password)
  } catch {
    // Not percent-encoded after all: the password is as written.
  }
  return text.replaceAll(password, "<redacted>").replaceAll(decoded, "<redacted>")
}

const sentence = (settings: Settings, failure: Failure): string => {
  const database = settings.storage.databaseUrl
  switch (failure._tag) {
    case "ServeError":
      return listenSentence(settings, failure.cause)
    case "SqlError": {
      const reason = messageOf(failure.cause) ?? messageOf(failure) ?? "the driver gave no reason"
      return `Cannot use the database of ${PREFIX}DATABASE_URL (${shownDatabase(database)}): ${withoutPassword(reason, database)}.`
    }
    case "RedisUnreachableError": {
      const url = Option.getOrElse(settings.storage.redisUrl, () => Redacted.make(""))
      const reason = withoutPasswordOf(String(fieldOf(failure, "reason") ?? "it did not answer"), url)
      return `Cannot use the Redis of ${PREFIX}REDIS_URL (${shownRedis(url)}): ${reason}.`
    }
    case "MigrationError":
      return `Cannot migrate the database of ${PREFIX}DATABASE_URL (${shownDatabase(database)}): ${withoutPassword(String(failure.message), database)}.`
    default:
      return `Cannot start: ${messageOf(failure) ?? String(failure._tag ?? "an unknown failure")}.`
  }
}

/**
 * A failure of start-up (the port, the database) as the one sentence an operator needs,
 * instead of the runtime's report with its stack: what could not be done, why, and what to set.
 */
export const startFailure =
  (settings: Settings) =>
  (error: unknown): StartupError =>
    error instanceof StartupError
      ? error
      : new StartupError({ lines: [sentence(settings, typeof error === "object" && error !== null ? error : {})] })
