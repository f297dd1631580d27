import { Layer, Logger, LogLevel } from "effect"
import type { LoggingSettings } from "../config/sections/logging.js"

const loggers = { json: Logger.json, logfmt: Logger.logFmt, pretty: Logger.pretty } as const
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
