import { describe, expect, it } from "@effect/vitest"
import { Context, Duration, Effect, Layer, Redacted, TestClock } from "effect"
import { Audit } from "../../application/Audit.js"
import { AuditLog } from "../../application/ports/AuditLog.js"
import { WebhookEndpoints } from "../../application/ports/WebhookEndpoints.js"
import { Webhooks } from "../../application/Webhooks.js"
import * as Logging from "../../composition/logging.js"
import { Actor } from "../../domain/Audit.js"
import * as CryptographyNode from "../../infrastructure/crypto/CryptographyNode.js"
import * as AuditLogSql from "../../infrastructure/sql/AuditLogSql.js"
import * as OutboxSql from "../../infrastructure/sql/OutboxSql.js"
import * as SqliteDatabase from "../../infrastructure/sql/SqliteDatabase.js"
import * as TransactionSql from "../../infrastructure/sql/TransactionSql.js"
import * as TestApp from "../support/TestApp.js"

/** The audit log on SQLite in memory, with no webhook endpoint to write messages for. */
const Store = Audit.Default.pipe(
  Layer.provide(Webhooks.Default),
  Layer.provideMerge(
    Layer.mergeAll(
      Layer.mergeAll(AuditLogSql.layer, OutboxSql.layer, TransactionSql.layer).pipe(
        Layer.provide(SqliteDatabase.layer(":memory:"))
      ),
      Layer.succeed(WebhookEndpoints, WebhookEndpoints.of({ list: Effect.succeed([]) })),
      CryptographyNode.layer(Redacted.make(TestApp.testSecretKey))
    )
  )
)

const recordNow = (label: string) =>
  Effect.flatMap(Audit, (audit) =>
    audit.record({ type: "account.locked", user_id: null, actor: Actor.none, details: { label } })
  )

const labels = Effect.flatMap(AuditLog, (log) =>
  Effect.map(log.list({ limit: 100 }), (records) => records.map((record) => record.details.label))
)

/** Real time for a sweep to go through its rests between batches (real timers, not the TestClock's). */
const settled = Effect.promise(() => new Promise<void>((resolve) => setTimeout(resolve, 200)))

describe("the serving service's sweeps (PRUNE_INTERVAL_SECONDS, AUDIT_RETENTION_DAYS)", () => {
  it.scoped("sweep once the service serves, then every interval, deleting what is past retention and only that", () =>
    Effect.gen(function* () {
      // The log is made beforehand, so that its entries are days old when the service starts;
      // once it serves, the TestClock moves by minutes (days would wake its every-minute timers
      // thousands of times).
      const store = yield* Layer.build(Store)
      yield* recordNow("three days before").pipe(Effect.provide(store))
      yield* TestClock.adjust(Duration.sum(Duration.days(1), Duration.minutes(5)))
      yield* recordNow("two days less five minutes before").pipe(Effect.provide(store))
      yield* TestClock.adjust(Duration.subtract(Duration.days(2), Duration.minutes(5)))
      const settings = TestApp.settingsFor({
        SERVICE_SECRET_KEY: TestApp.testSecretKey,
        SERVICE_DATABASE_URL: "memory:",
        SERVICE_LOG_LEVEL: "none",
        SERVICE_AUDIT_RETENTION_DAYS: "2",
        SERVICE_PRUNE_INTERVAL_SECONDS: "600"
      })
      const log = Layer.succeed(AuditLog, Context.get(store, AuditLog))
      yield* Layer.build(
        TestApp.serve(settings, { overrides: log }).pipe(Layer.provide(Logging.layer(settings.logging)))
      )
      yield* TestClock.adjust(Duration.millis(1))
      yield* settled
      expect(yield* labels.pipe(Effect.provide(store))).toEqual(["two days less five minutes before"])
      // Past retention five minutes later, but the next sweep is due ten minutes after the first.
      yield* TestClock.adjust(Duration.minutes(6))
      yield* settled
      expect(yield* labels.pipe(Effect.provide(store))).toEqual(["two days less five minutes before"])
      yield* TestClock.adjust(Duration.minutes(4))
      yield* settled
      expect(yield* labels.pipe(Effect.provide(store))).toEqual([])
    })
  )
})
