import { Context, Effect, Either, Layer, Option } from "effect"
import { type LoggingSettings, levels } from "../../config/sections/logging.js"
import { Host } from "./host.js"
import { Invocation } from "./invocation.js"

type Level = LoggingSettings["logLevel"]

/**
 * The levels `--log-level` takes: SERVICE_LOG_LEVEL's, as the help and README name them. No
 * alias (the library's `all` was one, which no page named).
 */
export const LOG_LEVELS: ReadonlyArray<Level> = levels

const isLevel = (value: string | undefined): value is Level => LOG_LEVELS.some((level) => level === value)

/**
 * `--log-level`, taken out of the command line. @effect/cli has it as a built-in option, but
 * only sets a default level, which each command's logger (LOG_LEVEL) replaces, and it refuses
 * the option after a command's own options; so the entry point reads it, wherever it is.
 */
export const takeLogLevel = (
  args: ReadonlyArray<string>
): Either.Either<{ readonly level: Option.Option<Level>; readonly args: ReadonlyArray<string> }, string> => {
  const at = args.findIndex((arg) => arg === "--log-level" || arg.startsWith("--log-level="))
  const arg = args[at]
  if (arg === undefined) return Either.right({ level: Option.none(), args })
  const inline = arg !== "--log-level"
  const value = inline ? arg.slice("--log-level=".length) : args[at + 1]
  if (!isLevel(value)) return Either.left(`--log-level must be one of ${LOG_LEVELS.join(", ")}`)
  return Either.right({
    level: Option.some(value),
    args: args.filter((_, index) => index !== at && (inline || index !== at + 1))
  })
}

/** What `--log-level` asked for, if anything: it overrides SERVICE_LOG_LEVEL. */
export class RequestedLogLevel extends Context.Reference<RequestedLogLevel>()("cli/RequestedLogLevel", {
  defaultValue: () => Option.none<Level>()
}) {}

/**
 * The logger for a command: LOG_FORMAT, and `--log-level` or else `fallback` (SERVICE_LOG_LEVEL
 * for serve; operator commands stay quiet by default); `fields` join every line (serve's `worker`).
 */
export const commandLogging = (
  settings: LoggingSettings,
  fallback: Level = settings.logLevel,
  fields: Readonly<Record<string, number>> = {}
) =>
  Layer.unwrapEffect(
    Effect.map(Effect.all([RequestedLogLevel, Host, Invocation]), ([requested, host, { stdout }]) =>
      host.logging({ ...settings, logLevel: Option.getOrElse(requested, () => fallback) }, fields, (line) =>
        stdout.write(line)
      )
    )
  )
