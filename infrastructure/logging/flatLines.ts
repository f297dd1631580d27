import { Cause, HashMap, Inspectable, List, Logger } from "effect"

/** A log entry as one flat record: `time`, `level`, `msg`, then its fields. */
export type FlatRecord = Record<string, unknown>

const reserved = new Set(["time", "level", "msg"])

const isPlainObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" &&
  value !== null &&
  (Object.getPrototypeOf(value) === Object.prototype || Object.getPrototypeOf(value) === null)

const fieldValue = (value: unknown): unknown => {
  switch (typeof value) {
    case "bigint":
    case "function":
    case "symbol":
      return String(value)
    default:
      return value instanceof Error ? { name: value.name, message: value.message } : Inspectable.toJSON(value)
  }
}

/**
 * The record of a log call: its first string part is `msg`; the fields of a plain object part
 * join the record (never over `time`, `level` or `msg`); any other part is `detail`; annotations
 * are fields; a cause is `cause`, rendered; spans are `<label>_ms`. Values go through Effect's
 * `toJSON`, so that Redacted values print as `<redacted>`.
 */
export const flatRecord = (options: Logger.Logger.Options<unknown>): FlatRecord => {
  const record: FlatRecord = {
    time: options.date.toISOString(),
    level: options.logLevel.label.toLowerCase(),
    msg: ""
  }
  const details: Array<unknown> = []
  const parts = Array.isArray(options.message) ? options.message : [options.message]
  for (const part of parts) {
    if (typeof part === "string" && record.msg === "") record.msg = part
    else if (isPlainObject(part)) {
      for (const [key, value] of Object.entries(part)) if (!reserved.has(key)) record[key] = fieldValue(value)
    } else details.push(fieldValue(part))
  }
  if (details.length > 0) record.detail = details.length === 1 ? details[0] : details
  for (const [key, value] of HashMap.toEntries(options.annotations)) {
    if (!reserved.has(key)) record[key] = fieldValue(value)
  }
  if (List.isCons(options.spans)) {
    const now = options.date.getTime()
    for (const span of options.spans) record[`${span.label}_ms`] = now - span.startTime
  }
  if (!Cause.isEmpty(options.cause)) record.cause = Cause.pretty(options.cause, { renderErrorCause: true })
  return record
}

/** One JSON object per line. */
export const json: Logger.Logger<unknown, string> = Logger.make((options) =>
  Inspectable.stringifyCircular(flatRecord(options))
)

const logfmtValue = (value: unknown): string => {
  const text = typeof value === "string" ? value : Inspectable.stringifyCircular(value)
  return /^[^\s"=\\]+$/.test(text) ? text : JSON.stringify(text)
}

/** `key=value` pairs, quoted where needed. */
export const logfmt: Logger.Logger<unknown, string> = Logger.make((options) =>
  Object.entries(flatRecord(options))
    .map(([key, value]) => `${key}=${logfmtValue(value)}`)
    .join(" ")
)
