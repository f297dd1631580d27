import { Layer, Logger, LogLevel } from "effect"
import type { LoggingSettings } from "../config/sections/logging.js"
import { stdoutLines } from "../infrastructure/logging/batchedLines.js"
import * as FlatLines from "../infrastructure/logging/flatLines.js"

/** A logger whose lines go to standard output in batches (infrastructure/logging/batchedLines.ts). */
const batched = (format: Logger.Logger<unknown, string>) =>
  Logger.replace(
    Logger.defaultLogger,
    Logger.map(format, (line) => stdoutLines().push(line))
  )

// pretty is for a terminal, where a person reads as it comes: it stays line by line.
const loggers = {
  json: batched(FlatLines.json),
  logfmt: batched(FlatLines.logfmt),
  pretty: Logger.pretty
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

/** LOG_FORMAT and LOG_LEVEL applied to Effect's logger. */
export const layer = (settings: LoggingSettings) =>
  Layer.merge(loggers[settings.logFormat], Logger.minimumLogLevel(levels[settings.logLevel]))
