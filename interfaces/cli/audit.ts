import { Command, Options } from "@effect/cli"
import { Console, Effect, Option, Schema } from "effect"
import { Audit } from "../../application/Audit.js"
import * as Logging from "../../composition/logging.js"
import {
  AUDIT_PAGE_DEFAULT,
  AUDIT_PAGE_MAX,
  AuditCursor,
  AuditEventType,
  AuditLimit,
  AuditPageJson,
  AuditUserFilter
} from "../../domain/Audit.js"
import { storageVariables } from "./operator.js"
import { loadSettings } from "./startup.js"

const encodePage = Schema.encode(AuditPageJson)

/** A value's schema whose failure is one line naming the option, as the other commands' refusals are. */
const refusedAs =
  (option: string, rule: string) =>
  <A, I>(schema: Schema.Schema<A, I>) =>
    schema.annotations({ message: () => ({ message: `--${option} ${rule}`, override: true }) })

/** `portcullis audit`: the audit log as GET /admin/audit answers it, with the same filters. */
export const audit = Command.make(
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
      Options.withSchema(refusedAs("type", "must be one of the types that audit --help lists")(AuditEventType)),
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
      const { settings } = yield* loadSettings
      // The stores and the use cases, imported for the commands that use them only.
      const { application } = yield* Effect.promise(() => import("../../composition/application.js"))
      const page = yield* Effect.flatMap(Audit, (log) =>
        log.list({
          user_id: Option.getOrUndefined(user),
          type: Option.getOrUndefined(type),
          before: Option.getOrUndefined(cursor),
          limit
        })
      ).pipe(
        Effect.provide(application(settings)),
        Effect.provide(Logging.layer({ ...settings.logging, logLevel: "warning" }))
      )
      yield* Console.log(JSON.stringify(yield* encodePage(page).pipe(Effect.orDie), null, 2))
    })
).pipe(
  Command.withDescription(
    `Print the audit log, newest first, as JSON; --cursor pages on. Entries older than SERVICE_AUDIT_RETENTION_DAYS are gone: serve deletes them. ${storageVariables}`
  )
)
