import { Command, Options } from "@effect/cli"
import { Console, DateTime, Duration, Effect, Option, Schema, Stream } from "effect"
import { Audit, EXPORT_PAGE } from "../../application/Audit.js"
import {
  AUDIT_PAGE_DEFAULT,
  AUDIT_PAGE_MAX,
  AuditCursor,
  AuditEventType,
  AuditLimit,
  AuditPageJson,
  AuditRecordJson,
  AuditUserFilter
} from "../../domain/Audit.js"
import { writeOut } from "./invocation.js"
import { operate } from "./operator.js"
import { withSubcommandsKnown } from "./output.js"
import { StartupError } from "./startup.js"

const encodePage = Schema.encode(AuditPageJson)

/** A value's schema whose failure is one line naming the option, as the other commands' refusals are. */
const refusedAs =
  (option: string, rule: string) =>
  <A, I>(schema: Schema.Schema<A, I>) =>
    schema.annotations({ message: () => ({ message: `--${option} ${rule}`, override: true }) })

/** `portcullis audit`: the audit log as GET /admin/audit answers it, with the same filters. */
const auditPages = Command.make(
  "audit",
  {
    user: Options.text("user").pipe(
      Options.withPseudoName("ID"),
      Options.withSchema(refusedAs("user", "must be a user id")(AuditUserFilter)),
      Options.optional,
      Options.withDescription("Only the events about this user id.")
    ),
    // Text rather than a choice, whose usage would list every type, padding each line of the
    // top-level help's command listing to that width.
    type: Options.text("type").pipe(
      Options.withPseudoName("TYPE"),
      Options.withSchema(refusedAs("type", `must be one of ${AuditEventType.literals.join(", ")}`)(AuditEventType)),
      Options.optional,
      Options.withDescription(`Only the events of this type: ${AuditEventType.literals.join(", ")}.`)
    ),
    limit: Options.integer("limit").pipe(
      Options.withSchema(
        refusedAs("limit", `must be a whole number from 1 to ${AUDIT_PAGE_MAX}`)(Schema.typeSchema(AuditLimit))
      ),
      Options.withDefault(AUDIT_PAGE_DEFAULT),
      Options.withDescription(`Events per page, 1 to ${AUDIT_PAGE_MAX}; ${AUDIT_PAGE_DEFAULT} when not given.`)
    ),
    cursor: Options.text("cursor").pipe(
      Options.withPseudoName("CURSOR"),
      Options.withSchema(refusedAs("cursor", "must be a cursor from next_cursor")(AuditCursor)),
      Options.optional,
      Options.withDescription("The next_cursor of the previous page.")
    )
  },
  ({ user, type, limit, cursor }) =>
    Effect.gen(function* () {
      const page = yield* operate(
        Effect.flatMap(Audit, (log) =>
          log.list({
            user_id: Option.getOrUndefined(user),
            type: Option.getOrUndefined(type),
            before: Option.getOrUndefined(cursor),
            limit
          })
        )
      )
      yield* Console.log(JSON.stringify(yield* encodePage(page).pipe(Effect.orDie), null, 2))
    })
).pipe(
  Command.withDescription(
    `Print the audit log, newest first, as JSON; --cursor pages on. Entries older than SERVICE_AUDIT_RETENTION_DAYS are gone: serve deletes them.`
  )
)

const encodeRecord = Schema.encode(AuditRecordJson)

/** A relative time back from now (`7d`, `24h`, `30m`) or an ISO 8601 date or date-time. */
export const parseSince = (value: string, now: DateTime.Utc): Option.Option<DateTime.Utc> => {
  const relative = /^(\d+)([dhm])$/.exec(value.trim())
  if (relative !== null) {
    const [, amount = "0", unit] = relative
    const duration = (unit === "d" ? Duration.days : unit === "h" ? Duration.hours : Duration.minutes)(Number(amount))
    return Option.some(DateTime.subtractDuration(now, duration))
  }
  if (!/^\d{4}-\d{2}-\d{2}/.test(value.trim())) return Option.none()
  return DateTime.make(value.trim()).pipe(Option.map(DateTime.toUtc))
}

/** `portcullis audit export`: the log from a time on, oldest first, for a SIEM; read a page at a time. */
const exportLog = Command.make(
  "export",
  {
    since: Options.text("since").pipe(
      Options.withPseudoName("WHEN"),
      Options.withDescription(
        "From when: an ISO 8601 date or date-time (2026-11-01, 2026-11-01T12:00:00Z), or 7d, 24h, 30m ago."
      )
    ),
    format: Options.choice("format", ["json", "jsonl"]).pipe(
      Options.withDefault("json" as const),
      Options.withDescription("json: one JSON array; jsonl: one event per line, as log shippers read it.")
    )
  },
  ({ since, format }) =>
    Effect.gen(function* () {
      const from = parseSince(since, yield* DateTime.now)
      if (Option.isNone(from)) {
        return yield* new StartupError({
          lines: [
            `--since ${JSON.stringify(since)} is no time; expected a date (2026-11-01), a date-time or 7d, 24h, 30m`
          ]
        })
      }
      // A page's lines written at once; in json, each page after the first joined to the last by a comma.
      let first = true
      if (format === "json") yield* Console.log("[")
      yield* operate(
        Effect.flatMap(Audit, (log) =>
          log.exportSince(from.value).pipe(
            Stream.mapEffect((record) => Effect.orDie(encodeRecord(record))),
            Stream.runForEachChunk((chunk) => {
              const lines = Array.from(chunk, (record) => JSON.stringify(record))
              if (lines.length === 0) return Effect.void
              const text = format === "jsonl" ? lines.join("\n") : `${first ? "" : ",\n"}${lines.join(",\n")}`
              first = false
              return format === "jsonl" ? Console.log(text) : writeOut(text)
            })
          )
        )
      )
      if (format === "json") yield* Console.log(first ? "]" : "\n]")
    })
).pipe(
  Command.withDescription(
    `Print the audit log from --since on, oldest first, reading ${EXPORT_PAGE} events at a time (a log of any size, in little memory).`
  )
)

export const audit = withSubcommandsKnown(auditPages, [exportLog])
