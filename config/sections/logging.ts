import * as F from "../forms.js"
import type { SettingsReader } from "../reader.js"

const levels = ["trace", "debug", "info", "warning", "error", "fatal", "none"] as const

const logLevel: F.Form<(typeof levels)[number]> = {
  expected: "trace, debug, info, warning, error, fatal or none",
  read: (raw) => {
    const value = raw.trim().toLowerCase()
    return F.oneOf(...levels).read(value === "warn" ? "warning" : value)
  }
}

export const readLogging = (read: SettingsReader) => ({
  logLevel: read.setting("LOG_LEVEL", logLevel, "info"),
  logFormat: read.setting("LOG_FORMAT", F.oneOf("json", "pretty", "logfmt"), "json")
})

export type LoggingSettings = ReturnType<typeof readLogging>
