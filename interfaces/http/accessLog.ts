import { Context, Effect, type LogLevel } from "effect"

/** The message of every access-log line. */
export const ACCESS_MESSAGE = "http request"

/** One answered request, as its access-log line has it (a type, not an interface: its lines' formats take any record of plain values). */
export type AccessEntry = {
  readonly method: string
  readonly route: string
  readonly path: string
  readonly status: number
  readonly duration_ms: number
  readonly client_address: string
  readonly user_agent: string
  readonly request_id: string
}

export interface AccessLogWriter {
  /** Logs `entry` at `level` (info; debug for health probes). */
  readonly write: (level: LogLevel.LogLevel, entry: AccessEntry) => Effect.Effect<void>
}

/**
 * A log call: whatever logger the program has (an embedder's own included) gets the line. The
 * request id is already a log annotation of the request's (responseHeaders in middleware.ts), so
 * it is not repeated among the message's fields.
 */
const throughTheLogger: AccessLogWriter = {
  write: (level, { request_id: _, ...fields }) => Effect.logWithLevel(level, ACCESS_MESSAGE, fields)
}

/**
 * Where access-log lines go: through Effect's logger unless the program says otherwise. The
 * service's own line formats say otherwise (composition/logging.ts): they write the same line
 * without a log call, whose logger machinery (a fiber's annotations, spans and loggers read and
 * merged for every line) is the larger part of a cheap request's logging.
 */
export class AccessLog extends Context.Reference<AccessLog>()("interfaces/http/AccessLog", {
  defaultValue: (): AccessLogWriter => throughTheLogger
}) {}
