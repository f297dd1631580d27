import { Command, Options } from "@effect/cli"
import { Console, Effect, Option, Schema } from "effect"
import { Audit } from "../../application/Audit.js"
import { application } from "../../composition/application.js"
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
import { loadSettings } from "./startup.js"

const encodePage = Schema.encode(AuditPageJson)

/** `portcullis audit`: the audit log as GET /admin/audit answers it, with the same filters. */
export const audit = Command.make(
  "audit",
  {
    user: Options.text("user").pipe(
      Options.withSchema(AuditUserFilter),
      Options.optional,
      Options.withDescription("Only the events about this user id.")
    ),
    type: Options.choice("type", AuditEventType.literals).pipe(
      Options.optional,
      Options.withDescription("Only the events of this type.")
    ),
    limit: Options.text("limit").pipe(
      Options.withSchema(AuditLimit),
      Options.withDefault(AUDIT_PAGE_DEFAULT),
      Options.withDescription(`Events per page, 1 to ${AUDIT_PAGE_MAX}.`)
    ),
    cursor: Options.text("cursor").pipe(
      Options.withSchema(AuditCursor),
      Options.optional,
      Options.withDescription("The next_cursor of the previous page.")
    )
  },
  ({ user, type, limit, cursor }) =>
    Effect.gen(function* () {
      const { settings } = yield* loadSettings
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
).pipe(Command.withDescription("Print the audit log, newest first, as JSON; --cursor pages on."))
