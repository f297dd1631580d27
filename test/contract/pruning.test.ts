import { describe, expect, it } from "@effect/vitest"
import { DateTime, Duration, Effect, Option } from "effect"
import { RefreshTokenRepo, type SessionPruneStep } from "../../application/ports/RefreshTokenRepo.js"
import { UserRepo } from "../../application/ports/UserRepo.js"
import { PRUNE_START, pruneCutoffs } from "../../domain/Retention.js"
import { FamilyId, StoredRefreshToken, TokenFamily } from "../../domain/Session.js"
import { Email, type UserId } from "../../domain/User.js"
import { databases } from "../support/databases.js"

/**
 * The sweeps of refresh tokens and sessions (docs/operating.md, "Data over time") on every store: each
 * step deletes exactly the rows its rule names, in batches, and a dry run counts what the sweep
 * then deletes.
 */

/** An instant with a millisecond part, so that a store rounding to seconds would show. */
const NOW = Date.UTC(2033, 2, 3, 4, 5, 6, 789)
const MINUTE = 60_000
const HOUR = 60 * MINUTE
const DAY = 24 * HOUR
const at = (offset: number) => DateTime.unsafeMake(NOW + offset)

/** The defaults: access tokens of 15 minutes, a leeway of 30 s, a reuse grace window of a minute. */
const cutoffs = pruneCutoffs(
  {
    accessTokenExpireMinutes: 15,
    jwtLeewaySeconds: 30,
    refreshReuseGraceSeconds: 60,
    auditRetentionDays: 90,
    dynamicClientIdleDays: 30
  },
  at(0)
)

const token = (digest: string, familyId: string, issued: number, expires: number) =>
  new StoredRefreshToken({
    digest,
    family_id: FamilyId.make(familyId),
    issued_at: at(issued),
    expires_at: at(expires),
    rotated_at: Option.none(),
    sealed_successor: Option.none()
  })

const family = (userId: UserId, id: string, created: number, expires: number) =>
  new TokenFamily({
    family_id: FamilyId.make(id),
    user_id: userId,
    ip_address: null,
    user_agent: null,
    created_at: at(created),
    last_used_at: at(created),
    expires_at: at(expires),
    revoked_at: Option.none()
  })

/**
 * One user's sessions in every state a sweep must tell apart, at NOW:
 * - live: live-1 rotated and expired, live-2 rotated ten minutes ago with a sealed successor
 *   (past the grace window), live-3 its current token;
 * - revoked-long: ended two hours ago, its two tokens unexpired (rl-1 rotated, sealed);
 * - revoked-recent: ended five minutes ago, its access tokens may still be about;
 * - expired: its last token expired an hour ago.
 */
const sessions = Effect.gen(function* () {
  const user = yield* (yield* UserRepo).create({
    email: Email.make("sweep@example.com"),
    hashed_password: Option.none(),
    is_active: true,
    is_verified: false,
    is_superuser: false
  })
  const tokens = yield* RefreshTokenRepo
  const rotate = (presented: string, successor: StoredRefreshToken, time: number, sealed?: string) =>
    Effect.flatMap(
      tokens.rotate({ presented, successor, sealedSuccessor: Option.fromNullable(sealed), now: at(time) }),
      (won) => Effect.sync(() => expect(won).toBe(true))
    )
  yield* tokens.startFamily(family(user.id, "live", -40 * DAY, -1), token("live-1", "live", -40 * DAY, -1))
  yield* rotate("live-1", token("live-2", "live", -20 * DAY, 20 * DAY), -20 * DAY)
  yield* rotate("live-2", token("live-3", "live", -10 * MINUTE, 29 * DAY), -10 * MINUTE, "sealed-2")
  yield* tokens.startFamily(
    family(user.id, "revoked-long", -DAY, 10 * DAY),
    token("rl-1", "revoked-long", -DAY, 10 * DAY)
  )
  yield* rotate("rl-1", token("rl-2", "revoked-long", -3 * HOUR, 20 * DAY), -3 * HOUR, "sealed-rl")
  yield* tokens.revokeFamily(FamilyId.make("revoked-long"), at(-2 * HOUR))
  yield* tokens.startFamily(
    family(user.id, "revoked-recent", -DAY, 25 * DAY),
    token("rr-1", "revoked-recent", -DAY, 25 * DAY)
  )
  yield* tokens.revokeFamily(FamilyId.make("revoked-recent"), at(-5 * MINUTE))
  yield* tokens.startFamily(family(user.id, "expired", -31 * DAY, -HOUR), token("ex-1", "expired", -31 * DAY, -HOUR))
  return user
})

const stored = (digest: string) =>
  Effect.map(
    Effect.flatMap(RefreshTokenRepo, (tokens) => tokens.findByDigest(digest)),
    Option.map(({ token }) => Option.getOrNull(token.sealed_successor))
  )

/**
 * Every batch of a step until one finds nothing, each from where the last reached: the rows each
 * deleted (or cleared).
 */
const allBatches = (step: SessionPruneStep, before: DateTime.Utc, limit: number) =>
  Effect.gen(function* () {
    const tokens = yield* RefreshTokenRepo
    const batches: Array<number> = []
    let from = PRUNE_START
    for (;;) {
      const batch = yield* tokens.prune(step, before, limit, from)
      batches.push(batch.done)
      if (batch.found === 0) return batches
      from = batch.reached
    }
  })

for (const backend of databases) {
  const run = <A, E>(effect: Effect.Effect<A, E, UserRepo | RefreshTokenRepo>) =>
    effect.pipe(Effect.provide(backend.repositories()))

  describe.skipIf(backend.skip)(`the sweeps of sessions (${backend.name})`, () => {
    it.effect("the cutoffs: now, an access token's life and leeway ago, the grace window ago", () =>
      Effect.sync(() => {
        expect(DateTime.toEpochMillis(cutoffs.tokensExpiredBefore)).toBe(NOW)
        expect(DateTime.toEpochMillis(cutoffs.sessionsEndedBefore)).toBe(NOW - 15 * MINUTE - 30_000)
        expect(DateTime.toEpochMillis(cutoffs.sealedRotatedBefore)).toBe(NOW - MINUTE)
        expect(DateTime.toEpochMillis(cutoffs.auditBefore)).toBe(NOW - Duration.toMillis(Duration.days(90)))
      })
    )

    it.effect("each step deletes what its rule names and nothing else; a dry run counts it first", () =>
      run(
        Effect.gen(function* () {
          const user = yield* sessions
          const tokens = yield* RefreshTokenRepo
          // rl-1's sealed successor is not counted as cleared: the sweep deletes rl-1 before.
          expect(yield* tokens.pending(cutoffs)).toEqual({ refreshTokens: 4, sessions: 2, sealedSuccessors: 1 })

          expect(yield* allBatches("expiredTokens", cutoffs.tokensExpiredBefore, 1_000)).toEqual([2, 0])
          expect(yield* stored("live-1")).toEqual(Option.none())
          expect(yield* stored("ex-1")).toEqual(Option.none())
          // A rotated token that has not expired stays: presented late, it is still reuse.
          expect(yield* stored("live-2")).toEqual(Option.some("sealed-2"))

          expect(yield* allBatches("revokedSessionTokens", cutoffs.sessionsEndedBefore, 1_000)).toEqual([2, 0])
          // The expired session's token expired with it, and is gone already.
          expect(yield* stored("ex-1")).toEqual(Option.none())
          expect(yield* stored("rl-1")).toEqual(Option.none())
          expect(yield* stored("rl-2")).toEqual(Option.none())
          // Ended five minutes ago: its access tokens may still be presented, and must be refused.
          expect(yield* stored("rr-1")).toEqual(Option.some(null))

          expect(yield* allBatches("revokedSessions", cutoffs.sessionsEndedBefore, 1_000)).toEqual([1, 0])
          expect(yield* allBatches("expiredSessions", cutoffs.sessionsEndedBefore, 1_000)).toEqual([1, 0])
          expect(yield* tokens.isEnded(FamilyId.make("revoked-long"))).toBe(true)
          expect(yield* tokens.isEnded(FamilyId.make("revoked-recent"))).toBe(true)
          expect(yield* tokens.isEnded(FamilyId.make("live"))).toBe(false)

          expect(yield* allBatches("sealedSuccessors", cutoffs.sealedRotatedBefore, 1_000)).toEqual([1, 0])
          expect(yield* stored("live-2")).toEqual(Option.some(null))

          // The live session is as it was: its current token rotates.
          expect(yield* stored("live-3")).toEqual(Option.some(null))
          const live = yield* tokens.liveFamiliesOf(user.id, at(0), {
            limit: 10,
            after: Option.none(),
            except: Option.none()
          })
          expect(live.map((found) => found.family_id)).toEqual(["live"])
          expect(yield* tokens.pending(cutoffs)).toEqual({ refreshTokens: 0, sessions: 0, sealedSuccessors: 0 })
          expect(
            yield* tokens.rotate({
              presented: "live-3",
              successor: token("live-4", "live", 0, 30 * DAY),
              sealedSuccessor: Option.none(),
              now: at(0)
            })
          ).toBe(true)
        })
      )
    )

    it.effect("a batch holds at most its limit of rows; rows of one key split over batches are all taken", () =>
      run(
        Effect.gen(function* () {
          yield* sessions
          expect(yield* allBatches("expiredTokens", cutoffs.tokensExpiredBefore, 1)).toEqual([1, 1, 0])
          // rl-1 and rl-2 share their session's time of revocation, the step's key. (A SQL store
          // looks for them a window of sessions at a time, and may end with an empty batch.)
          const ofRevoked = yield* allBatches("revokedSessionTokens", cutoffs.sessionsEndedBefore, 1)
          expect(Math.max(...ofRevoked)).toBe(1)
          expect(ofRevoked.reduce((sum, done) => sum + done, 0)).toBe(2)
          expect(yield* stored("rl-1")).toEqual(Option.none())
          expect(yield* stored("rl-2")).toEqual(Option.none())
        })
      )
    )

    it.effect("a batch takes the step's rows in the order of its key, from where the last one reached", () =>
      run(
        Effect.gen(function* () {
          yield* sessions
          const tokens = yield* RefreshTokenRepo
          // ex-1 expired an hour ago, live-1 a millisecond ago: the first batch of one takes ex-1.
          const first = yield* tokens.prune("expiredTokens", cutoffs.tokensExpiredBefore, 1, PRUNE_START)
          expect(first).toEqual({ found: 1, done: 1, reached: NOW - HOUR })
          expect(yield* stored("ex-1")).toEqual(Option.none())
          expect(yield* stored("live-1")).toEqual(Option.some(null))
          // Rows before `from` are not taken, whatever is left of them.
          const past = yield* tokens.prune("expiredTokens", cutoffs.tokensExpiredBefore, 10, NOW)
          expect(past).toEqual({ found: 0, done: 0, reached: NOW })
          expect(yield* stored("live-1")).toEqual(Option.some(null))
          const next = yield* tokens.prune("expiredTokens", cutoffs.tokensExpiredBefore, 10, first.reached)
          expect(next).toMatchObject({ found: 1, done: 1 })
          expect(next.reached).toBeGreaterThanOrEqual(NOW - 1)
          expect(yield* stored("live-1")).toEqual(Option.none())
          expect((yield* tokens.prune("expiredTokens", cutoffs.tokensExpiredBefore, 10, next.reached)).found).toBe(0)
        })
      )
    )

    it.effect("the tokens of ended sessions are found past many ended sessions that have none left", () =>
      run(
        Effect.gen(function* () {
          const user = yield* sessions
          const tokens = yield* RefreshTokenRepo
          // Twelve sessions revoked three hours ago whose tokens are gone, then one with a token.
          for (let n = 0; n < 12; n++) {
            yield* tokens.startFamily(
              family(user.id, `bare-${n}`, -DAY, 10 * DAY),
              token(`bare-${n}`, `bare-${n}`, -DAY, DAY)
            )
            yield* tokens.revokeFamily(FamilyId.make(`bare-${n}`), at(-3 * HOUR - n))
            yield* tokens.prune("expiredTokens", at(2 * DAY), 10, PRUNE_START)
            expect(yield* stored(`bare-${n}`)).toEqual(Option.none())
          }
          const batches = yield* allBatches("revokedSessionTokens", cutoffs.sessionsEndedBefore, 5)
          // rl-1 and rl-2, revoked two hours ago, behind the twelve: found, five sessions a batch at most.
          expect(batches.reduce((sum, done) => sum + done, 0)).toBe(2)
          expect(yield* stored("rl-2")).toEqual(Option.none())
          expect(yield* stored("rr-1")).toEqual(Option.some(null))
        })
      )
    )

    it.effect("a session ended before the cutoff goes with its tokens even when the tokens' step did not run", () =>
      run(
        Effect.gen(function* () {
          yield* sessions
          expect(yield* allBatches("revokedSessions", cutoffs.sessionsEndedBefore, 1_000)).toEqual([1, 0])
          expect(yield* allBatches("expiredSessions", cutoffs.sessionsEndedBefore, 1_000)).toEqual([1, 0])
          expect(yield* stored("rl-2")).toEqual(Option.none())
          expect(yield* stored("ex-1")).toEqual(Option.none())
          expect(yield* stored("rr-1")).toEqual(Option.some(null))
        })
      )
    )
  })
}
