import * as F from "../forms.js"
import type { SettingsReader } from "../reader.js"

/** The levels, least severe first: SERVICE_LOG_LEVEL and the CLI's --log-level take these. */
export const levels = ["trace", "debug", "info", "warning", "error", "fatal", "none"] as const

const logLevel: F.Form<(typeof levels)[number]> = {
  expected: "trace, debug, info, warning, error, fatal or none",
  read: (raw) => {
    const value = raw.trim().toLowerCase()
    return F.oneOf(...levels).read(value === "warn" ? "warning" : value)
  }
}

export const readLogging = (read: SettingsReader) => ({
  logLevel: read.setting("LOG_LEVEL", logLevel, "info", {
    doc: "The least severe level written (`warn` is read as `warning`)."
  }),
  logFormat: read.setting("LOG_FORMAT", F.oneOf("json", "pretty", "logfmt"), "json", {
    doc: "`json`: one flat object a line (`time`, `level`, `msg`, then fields); `logfmt`: the same as `key=value` pairs; `pretty`: for a terminal."
  })
})

export type LoggingSettings = ReturnType<typeof readLogging>
