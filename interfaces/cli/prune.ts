import { Command, Options } from "@effect/cli"
import { Console, Effect, Option } from "effect"
import { Pruning } from "../../application/Pruning.js"
import type { PruneReport } from "../../domain/Retention.js"
import { operate } from "./operator.js"

const lines = (report: PruneReport, verb: string) => [
  `refresh tokens ${verb}: ${report.refreshTokens}`,
  `sessions ${verb}: ${report.sessions}`,
  `sealed successors ${verb === "deleted" ? "cleared" : "to clear"}: ${report.sealedSuccessors}`,
  `audit events ${verb}: ${report.auditEvents}`,
  `sign-in requests ${verb}: ${report.signInRequests}`,
  `address changes ${verb}: ${report.addressChanges}`,
  `webhook messages ${verb}: ${report.webhookMessages}`,
  `provider codes ${verb}: ${report.providerCodes}`,
  `provider sign-in requests ${verb}: ${report.parkedRequests}`,
  `provider grants ${verb}: ${report.providerGrants}`,
  `idle self-registered clients ${verb}: ${report.idleClients}`
]

const megabytes = (bytes: number) => `${(bytes / 1_048_576).toFixed(1)} MB`

/**
 * `portcullis prune`: one sweep of what has outlived its purpose, as a serving process runs every
 * PRUNE_INTERVAL_SECONDS, for operators who prefer cron; `--dry-run` counts, `--vacuum` rewrites a
 * SQLite file so that it gives its free pages back (and does so by itself from then on).
 */
export const prune = Command.make(
  "prune",
  {
    dryRun: Options.boolean("dry-run").pipe(
      Options.withDescription("Count what a sweep would delete; delete nothing.")
    ),
    vacuum: Options.boolean("vacuum").pipe(
      Options.withDescription(
        "Then rewrite a SQLite file (VACUUM) to give its free pages back; once for a file made before 0.2.0. It holds the file's write lock while it runs."
      )
    )
  },
  ({ dryRun, vacuum }) =>
    Effect.gen(function* () {
      const output = yield* operate(
        Effect.gen(function* () {
          const pruning = yield* Pruning
          if (dryRun) return lines(yield* pruning.pending(), "to delete")
          const report = lines(yield* pruning.prune(), "deleted")
          if (!vacuum) return report
          const size = yield* pruning.vacuum
          return [
            ...report,
            Option.match(size, {
              onNone: () => "vacuum: nothing to do for this store (PostgreSQL's autovacuum gives space back)",
              onSome: ({ before, after }) => `vacuum: ${megabytes(before)} -> ${megabytes(after)}`
            })
          ]
        })
      )
      yield* Console.log(output.join("\n"))
    })
).pipe(
  Command.withDescription(
    `Delete what has outlived its purpose, as serve does every SERVICE_PRUNE_INTERVAL_SECONDS: expired refresh tokens, sessions ended longer than an access token lives, sealed successors past the reuse grace window, audit events past SERVICE_AUDIT_RETENTION_DAYS.`
  )
)
