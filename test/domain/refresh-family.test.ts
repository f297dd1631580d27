import { describe, expect, it } from "@effect/vitest"
import { DateTime, Duration, Effect, Option, TestClock } from "effect"
import { decideRefresh, FamilyId, type RefreshDecision, StoredRefreshToken, TokenFamily } from "../../domain/Session.js"
import { UserId } from "../../domain/User.js"

const START = Date.UTC(2030, 0, 1, 12, 0, 0)
const NO_GRACE = Duration.zero
const GRACE = Duration.seconds(5)

interface Shape {
  readonly issuedAt: DateTime.Utc
  readonly lifetime?: Duration.DurationInput
  readonly rotatedAt?: DateTime.Utc
  readonly sealedSuccessor?: string
  readonly revokedAt?: DateTime.Utc
}

/** A token and its family, both built with their Schema class constructors. */
const stored = (shape: Shape) => {
  const expiresAt = DateTime.addDuration(shape.issuedAt, shape.lifetime ?? "30 days")
  const family_id = FamilyId.make("family-1")
  const family = new TokenFamily({
    family_id,
    user_id: UserId.make("user-1"),
    ip_address: "203.0.113.7",
    user_agent: "test-agent",
    created_at: shape.issuedAt,
    last_used_at: shape.issuedAt,
    expires_at: expiresAt,
    revoked_at: Option.fromNullable(shape.revokedAt)
  })
  const token = new StoredRefreshToken({
    digest: "a".repeat(64),
    family_id,
    issued_at: shape.issuedAt,
    expires_at: expiresAt,
    rotated_at: Option.fromNullable(shape.rotatedAt),
    sealed_successor: Option.fromNullable(shape.sealedSuccessor)
  })
  return Option.some({ token, family })
}

const decideNow = (found: ReturnType<typeof stored>, grace: Duration.Duration) =>
  Effect.map(DateTime.now, (now): RefreshDecision => decideRefresh(found, now, grace))

const start = TestClock.setTime(START)

describe("decideRefresh (the refresh-family rule)", () => {
  it.effect("answers Unknown when no token was found", () =>
    Effect.gen(function* () {
      yield* start
      const now = yield* DateTime.now
      expect(decideRefresh(Option.none(), now, NO_GRACE)._tag).toBe("Unknown")
      expect(decideRefresh(Option.none(), now, GRACE)._tag).toBe("Unknown")
    })
  )

  it.effect("answers Rotate for a live token that was never rotated", () =>
    Effect.gen(function* () {
      yield* start
      const found = stored({ issuedAt: yield* DateTime.now })
      expect((yield* decideNow(found, NO_GRACE))._tag).toBe("Rotate")
      yield* TestClock.adjust("29 days")
      expect((yield* decideNow(found, GRACE))._tag).toBe("Rotate")
    })
  )

  it.effect("answers Revoked for a token of an ended family, whatever else holds", () =>
    Effect.gen(function* () {
      yield* start
      const issuedAt = yield* DateTime.now
      const live = stored({ issuedAt, revokedAt: issuedAt })
      expect((yield* decideNow(live, NO_GRACE))._tag).toBe("Revoked")

      const rotated = stored({ issuedAt, rotatedAt: issuedAt, sealedSuccessor: "sealed", revokedAt: issuedAt })
      expect((yield* decideNow(rotated, GRACE))._tag).toBe("Revoked")
      expect((yield* decideNow(rotated, NO_GRACE))._tag).toBe("Revoked")

      const expiring = stored({ issuedAt, lifetime: "1 hour", rotatedAt: issuedAt, revokedAt: issuedAt })
      yield* TestClock.adjust("2 hours")
      expect((yield* decideNow(expiring, NO_GRACE))._tag).toBe("Revoked")
      expect((yield* decideNow(expiring, GRACE))._tag).toBe("Revoked")
    })
  )

  it.effect("answers Expired from the instant expires_at is reached, not one millisecond before", () =>
    Effect.gen(function* () {
      yield* start
      const found = stored({ issuedAt: yield* DateTime.now, lifetime: "10 seconds" })
      yield* TestClock.adjust(Duration.millis(9_999))
      expect((yield* decideNow(found, NO_GRACE))._tag).toBe("Rotate")
      yield* TestClock.adjust(Duration.millis(1))
      expect((yield* decideNow(found, NO_GRACE))._tag).toBe("Expired")
      yield* TestClock.adjust("1 day")
      expect((yield* decideNow(found, NO_GRACE))._tag).toBe("Expired")
    })
  )

  it.effect("answers Expired, not reuse, for an expired token that had been rotated", () =>
    Effect.gen(function* () {
      yield* start
      const issuedAt = yield* DateTime.now
      const found = stored({ issuedAt, lifetime: "10 seconds", rotatedAt: issuedAt, sealedSuccessor: "sealed" })
      yield* TestClock.adjust("10 seconds")
      expect((yield* decideNow(found, NO_GRACE))._tag).toBe("Expired")
      expect((yield* decideNow(found, Duration.minutes(1)))._tag).toBe("Expired")
    })
  )

  describe("without a grace window", () => {
    it.effect("a rotated token is reuse even at the instant of its rotation, sealed successor or not", () =>
      Effect.gen(function* () {
        yield* start
        const now = yield* DateTime.now
        const withSuccessor = stored({ issuedAt: now, rotatedAt: now, sealedSuccessor: "sealed" })
        const withoutSuccessor = stored({ issuedAt: now, rotatedAt: now })
        expect((yield* decideNow(withSuccessor, NO_GRACE))._tag).toBe("ReuseDetected")
        expect((yield* decideNow(withoutSuccessor, NO_GRACE))._tag).toBe("ReuseDetected")
        yield* TestClock.adjust(Duration.millis(1))
        expect((yield* decideNow(withSuccessor, NO_GRACE))._tag).toBe("ReuseDetected")
      })
    )
  })

  describe("with a grace window of 5 seconds", () => {
    it.effect("replays the sealed successor up to exactly 5 s after rotation, then detects reuse", () =>
      Effect.gen(function* () {
        yield* start
        const issuedAt = yield* DateTime.now
        yield* TestClock.adjust("1 minute")
        const rotatedAt = yield* DateTime.now
        const found = stored({ issuedAt, rotatedAt, sealedSuccessor: "v1.iv.sealed-pair" })

        expect(yield* decideNow(found, GRACE)).toEqual({
          _tag: "ReplaySuccessor",
          sealedSuccessor: "v1.iv.sealed-pair"
        })
        yield* TestClock.adjust("5 seconds")
        expect(yield* decideNow(found, GRACE)).toEqual({
          _tag: "ReplaySuccessor",
          sealedSuccessor: "v1.iv.sealed-pair"
        })
        yield* TestClock.adjust(Duration.millis(1))
        expect((yield* decideNow(found, GRACE))._tag).toBe("ReuseDetected")
      })
    )

    it.effect("carries the successor of the token presented, not a fixed value", () =>
      Effect.gen(function* () {
        yield* start
        const now = yield* DateTime.now
        const one = yield* decideNow(stored({ issuedAt: now, rotatedAt: now, sealedSuccessor: "first" }), GRACE)
        const two = yield* decideNow(stored({ issuedAt: now, rotatedAt: now, sealedSuccessor: "second" }), GRACE)
        expect(one).toEqual({ _tag: "ReplaySuccessor", sealedSuccessor: "first" })
        expect(two).toEqual({ _tag: "ReplaySuccessor", sealedSuccessor: "second" })
      })
    )

    it.effect("detects reuse within the window when no sealed successor was kept", () =>
      Effect.gen(function* () {
        yield* start
        const now = yield* DateTime.now
        const found = stored({ issuedAt: now, rotatedAt: now })
        expect((yield* decideNow(found, GRACE))._tag).toBe("ReuseDetected")
        yield* TestClock.adjust("1 second")
        expect((yield* decideNow(found, GRACE))._tag).toBe("ReuseDetected")
      })
    )
  })
})
