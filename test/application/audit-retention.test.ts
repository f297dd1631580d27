import { describe, expect, it } from "@effect/vitest"
import { Context, Duration, Effect, Layer, TestClock } from "effect"
import { Audit } from "../../application/Audit.js"
import { auditRetention } from "../../application/AuditRetention.js"
import { AuditLog } from "../../application/ports/AuditLog.js"
import * as Logging from "../../composition/logging.js"
import { Actor } from "../../domain/Audit.js"
import * as AuditLogMemory from "../../infrastructure/memory/AuditLogMemory.js"
import * as TestApp from "../support/TestApp.js"

const Store = Audit.Default.pipe(Layer.provideMerge(AuditLogMemory.layer))

const recordNow = (label: string) =>
  Effect.flatMap(Audit, (audit) =>
    audit.record({ type: "account.locked", user_id: null, actor: Actor.none, details: { label } })
  )

const labels = Effect.flatMap(AuditLog, (log) =>
  Effect.map(log.list({ limit: 100 }), (records) => records.map((record) => record.details.label))
)

describe("audit retention (AUDIT_RETENTION_DAYS)", () => {
  it.scoped("deletes what is past retention as serving starts", () =>
    Effect.gen(function* () {
      yield* recordNow("day 0")
      yield* TestClock.adjust(Duration.days(91))
      yield* recordNow("day 91")
      yield* Layer.build(auditRetention(90))
      yield* TestClock.adjust(Duration.millis(1))
      expect(yield* labels).toEqual(["day 91"])
    }).pipe(Effect.provide(Store))
  )

  it.scoped("then sweeps every hour while serving", () =>
    Effect.gen(function* () {
      yield* recordNow("day 0")
      yield* TestClock.adjust(Duration.days(89))
      yield* recordNow("day 89")
      yield* Layer.build(auditRetention(90))
      yield* TestClock.adjust(Duration.hours(23))
      expect(yield* labels).toEqual(["day 89", "day 0"])
      // Day 90 and two hours: a sweep since day 90 has passed the first entry's 90 days.
      yield* TestClock.adjust(Duration.hours(3))
      expect(yield* labels).toEqual(["day 89"])
    }).pipe(Effect.provide(Store))
  )

  it.scoped("keeps entries exactly at the retention boundary's younger side", () =>
    Effect.gen(function* () {
      yield* recordNow("kept")
      yield* TestClock.adjust(Duration.days(90))
      expect(yield* Effect.flatMap(Audit, (audit) => audit.sweep(90))).toBe(0)
      yield* TestClock.adjust(Duration.millis(1))
      expect(yield* Effect.flatMap(Audit, (audit) => audit.sweep(90))).toBe(1)
      expect(yield* labels).toEqual([])
    }).pipe(Effect.provide(Store))
  )
})

describe("the serving service's retention", () => {
  it.scoped("is AUDIT_RETENTION_DAYS: serving starts by deleting what is older, and only that", () =>
    Effect.gen(function* () {
      // The log is made beforehand, so that its entries are days old when the service starts: a
      // TestClock moved by days under a running service would wake its every-minute sweeps for each.
      const store = yield* Layer.build(Store)
      yield* recordNow("three days before").pipe(Effect.provide(store))
      yield* TestClock.adjust(Duration.days(2))
      yield* recordNow("a day before").pipe(Effect.provide(store))
      yield* TestClock.adjust(Duration.days(1))
      const settings = TestApp.settingsFor({
        SERVICE_SECRET_KEY: TestApp.testSecretKey,
        SERVICE_DATABASE_URL: "memory:",
        SERVICE_LOG_LEVEL: "none",
        SERVICE_AUDIT_RETENTION_DAYS: "2"
      })
      const log = Layer.succeed(AuditLog, Context.get(store, AuditLog))
      yield* Layer.build(
        TestApp.serve(settings, { overrides: log }).pipe(Layer.provide(Logging.layer(settings.logging)))
      )
      yield* TestClock.adjust(Duration.millis(1))
      expect(yield* labels.pipe(Effect.provide(store))).toEqual(["a day before"])
    })
  )
})
