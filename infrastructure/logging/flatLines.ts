import { Cause, Inspectable, List, Logger } from "effect"

/** A log entry as one flat record: `time`, `level`, `msg`, then its fields. */
export type FlatRecord = Record<string, unknown>

const reserved = new Set(["time", "level", "msg"])

const isPlainObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" &&
  value !== null &&
  (Object.getPrototypeOf(value) === Object.prototype || Object.getPrototypeOf(value) === null)

const fieldValue = (value: unknown): unknown => {
  switch (typeof value) {
    // Nothing to redact or to call in these: the access line's fields are all of them.
    case "string":
    case "number":
    case "boolean":
    case "undefined":
      return value
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
      for (const key in part) if (!reserved.has(key)) record[key] = fieldValue(part[key])
    } else details.push(fieldValue(part))
  }
  if (details.length > 0) record.detail = details.length === 1 ? details[0] : details
  for (const [key, value] of options.annotations) {
    if (!reserved.has(key)) record[key] = fieldValue(value)
  }
  if (List.isCons(options.spans)) {
    const now = options.date.getTime()
    for (const span of options.spans) record[`${span.label}_ms`] = now - span.startTime
  }
  if (!Cause.isEmpty(options.cause)) record.cause = Cause.pretty(options.cause, { renderErrorCause: true })
  return record
}

/** Whether every field is a string, number, boolean or null: nothing in it to redact or to loop on. */
const isFlat = (record: FlatRecord) => {
  for (const key in record) {
    const value = record[key]
    if (typeof value === "object" && value !== null) return false
  }
  return true
}

/**
 * One JSON object per line. A record of plain values (every request's access line) is written by
 * JSON.stringify alone, which gives the same text without the replacer that looks for cycles and
 * redactable values at each of its fields.
 */
export const json: Logger.Logger<unknown, string> = Logger.make((options) => {
  const record = flatRecord(options)
  return isFlat(record) ? JSON.stringify(record) : Inspectable.stringifyCircular(record)
})

const logfmtValue = (value: unknown): string => {
  const text = typeof value === "string" ? value : Inspectable.stringifyCircular(value)
  return /^[^\s"=\\]+$/.test(text) ? text : JSON.stringify(text)
}

const logfmtLine = (record: FlatRecord) =>
  Object.entries(record)
    .map(([key, value]) => `${key}=${logfmtValue(value)}`)
    .join(" ")

/** `key=value` pairs, quoted where needed. */
export const logfmt: Logger.Logger<unknown, string> = Logger.make((options) => logfmtLine(flatRecord(options)))

/** Fields every line of a process carries (composition/logging.ts: `worker`): plain values only. */
export type FlatFields = Readonly<Record<string, string | number | boolean>>
