import { describe, expect, it } from "@effect/vitest"
import { Duration, Effect, Layer, TestClock } from "effect"
import { Audit } from "../../application/Audit.js"
import { auditRetention } from "../../application/AuditRetention.js"
import { AuditLog } from "../../application/ports/AuditLog.js"
import { Actor } from "../../domain/Audit.js"
import * as AuditLogMemory from "../../infrastructure/memory/AuditLogMemory.js"

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
