import { HashMap, Layer, Logger, LogLevel } from "effect"
import type { LoggingSettings } from "../config/sections/logging.js"
import * as FlatLines from "../infrastructure/logging/flatLines.js"

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

/** Where the lines go: `write` is given each line with its line ending. */
type Write = (line: string) => void

/**
 * Standard output, one write a line: on Linux a write to a file, a pipe or a terminal is
 * synchronous, so no line is lost when the process ends, whatever ends it.
 */
const toStdout: Write = (line) => void process.stdout.write(line)

const writing = (format: Logger.Logger<unknown, string>, fields: FlatLines.FlatFields, write: Write) =>
  Logger.replace(
    Logger.defaultLogger,
    Logger.map(withFields(format, fields), (line) => write(`${line}\n`))
  )

// pretty is for a terminal, where a person reads as it comes.
const loggers = {
  json: (fields: FlatLines.FlatFields, write: Write) => writing(FlatLines.json, fields, write),
  logfmt: (fields: FlatLines.FlatFields, write: Write) => writing(FlatLines.logfmt, fields, write),
  pretty: (fields: FlatLines.FlatFields) =>
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

/**
 * LOG_FORMAT and LOG_LEVEL applied to Effect's logger and to the access log; `fields` join every
 * line; the lines go to `write` (standard output unless told).
 */
export const layer = (settings: LoggingSettings, fields: FlatLines.FlatFields = {}, write: Write = toStdout) =>
  Layer.merge(loggers[settings.logFormat](fields, write), Logger.minimumLogLevel(levels[settings.logLevel]))
