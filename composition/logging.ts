import { Effect, Layer, Logger, LogLevel } from "effect"
import type { LoggingSettings } from "../config/sections/logging.js"
import { stdoutLines } from "../infrastructure/logging/batchedLines.js"
import * as FlatLines from "../infrastructure/logging/flatLines.js"
import { ACCESS_MESSAGE, AccessLog } from "../interfaces/http/accessLog.js"

/** A logger whose lines go to standard output in batches (infrastructure/logging/batchedLines.ts). */
const batched = (format: Logger.Logger<unknown, string>) =>
  Logger.replace(
    Logger.defaultLogger,
    Logger.map(format, (line) => stdoutLines().push(line))
  )

/**
 * The access log written straight into the logger's batch, in the logger's format, without a log
 * call: the same line (test/infrastructure/flat-lines.test.ts) for a request's worth of fiber
 * steps and record building less.
 */
const directAccessLog = (format: "json" | "logfmt", minimum: LogLevel.LogLevel) => {
  const line = FlatLines.flatLine(format)
  return Layer.succeed(AccessLog, {
    write: (level, entry) =>
      LogLevel.lessThan(level, minimum)
        ? Effect.void
        : Effect.sync(() => stdoutLines().push(line(level, ACCESS_MESSAGE, entry)))
  })
}

// pretty is for a terminal, where a person reads as it comes: it stays line by line, and its
// access lines are log calls like any other.
const loggers = {
  json: (minimum: LogLevel.LogLevel) => Layer.merge(batched(FlatLines.json), directAccessLog("json", minimum)),
  logfmt: (minimum: LogLevel.LogLevel) => Layer.merge(batched(FlatLines.logfmt), directAccessLog("logfmt", minimum)),
  pretty: (_: LogLevel.LogLevel) => Logger.pretty
} as const
const levels = {
  trace: LogLevel.Trace,
  debug: LogLevel.Debug,
  info: LogLevel.Info,
  warning: LogLevel.Warning,
  error: LogLevel.Error,
  fatal: LogLevel.Fatal,
  none: LogLevel.None
} as const

/** LOG_FORMAT and LOG_LEVEL applied to Effect's logger and to the access log. */
export const layer = (settings: LoggingSettings) =>
  Layer.merge(loggers[settings.logFormat](levels[settings.logLevel]), Logger.minimumLogLevel(levels[settings.logLevel]))
