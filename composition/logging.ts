import { Effect, HashMap, Layer, Logger, LogLevel } from "effect"
import type { LoggingSettings } from "../config/sections/logging.js"
import { stdoutLines } from "../infrastructure/logging/batchedLines.js"
import * as FlatLines from "../infrastructure/logging/flatLines.js"
import { ACCESS_MESSAGE, AccessLog } from "../interfaces/http/accessLog.js"

/**
 * The fields every line of this process carries (`worker` with WORKERS>1), as annotations that
 * no fiber needs to hold: lines logged outside the serving fibers (a cluster event's) carry them too.
 */
const withFields = <O>(logger: Logger.Logger<unknown, O>, fields: FlatLines.FlatFields) => {
  const entries = Object.entries(fields)
  return entries.length === 0
    ? logger
    : Logger.mapInputOptions(logger, (options: Logger.Logger.Options<unknown>) => ({
        ...options,
        annotations: entries.reduce(
          (annotations, [key, value]) => HashMap.set(annotations, key, value),
          options.annotations
        )
      }))
}

/** A logger whose lines go to standard output in batches (infrastructure/logging/batchedLines.ts). */
const batched = (format: Logger.Logger<unknown, string>, fields: FlatLines.FlatFields) =>
  Logger.replace(
    Logger.defaultLogger,
    Logger.map(withFields(format, fields), (line) => stdoutLines().push(line))
  )

/**
 * The access log written straight into the logger's batch, in the logger's format, without a log
 * call: the same line (test/infrastructure/flat-lines.test.ts) for a request's worth of fiber
 * steps and record building less.
 */
const directAccessLog = (format: "json" | "logfmt", minimum: LogLevel.LogLevel, fields: FlatLines.FlatFields) => {
  const line = FlatLines.flatLine(format)
  // One process (no fields to add) copies no entry: this runs on every request.
  const stamped =
    Object.keys(fields).length === 0
      ? (entry: FlatLines.FlatFields) => entry
      : (entry: FlatLines.FlatFields) => ({ ...entry, ...fields })
  return Layer.succeed(AccessLog, {
    write: (level, entry) =>
      LogLevel.lessThan(level, minimum)
        ? Effect.void
        : Effect.sync(() => stdoutLines().push(line(level, ACCESS_MESSAGE, stamped(entry))))
  })
}

// pretty is for a terminal, where a person reads as it comes: it stays line by line, and its
// access lines are log calls like any other.
const loggers = {
  json: (minimum: LogLevel.LogLevel, fields: FlatLines.FlatFields) =>
    Layer.merge(batched(FlatLines.json, fields), directAccessLog("json", minimum, fields)),
  logfmt: (minimum: LogLevel.LogLevel, fields: FlatLines.FlatFields) =>
    Layer.merge(batched(FlatLines.logfmt, fields), directAccessLog("logfmt", minimum, fields)),
  pretty: (_: LogLevel.LogLevel, fields: FlatLines.FlatFields) =>
    Logger.replace(Logger.defaultLogger, withFields(Logger.prettyLoggerDefault, fields))
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

/** LOG_FORMAT and LOG_LEVEL applied to Effect's logger and to the access log; `fields` join every line. */
export const layer = (settings: LoggingSettings, fields: FlatLines.FlatFields = {}) =>
  Layer.merge(
    loggers[settings.logFormat](levels[settings.logLevel], fields),
    Logger.minimumLogLevel(levels[settings.logLevel])
  )
