import { Effect, type LogLevel } from "effect"

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

/**
 * Logs `entry` at `level` (info; debug for health probes) as a log call: whatever logger the
 * program has (the service's line formats, an embedder's own) gets the line. The request id is
 * already a log annotation of the request's (responseHeaders in middleware.ts), so it is not
 * repeated among the message's fields.
 */
export const writeAccessLine = (level: LogLevel.LogLevel, { request_id: _, ...fields }: AccessEntry) =>
  Effect.logWithLevel(level, ACCESS_MESSAGE, fields)
