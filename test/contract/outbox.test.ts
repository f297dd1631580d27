import { describe, expect, it } from "@effect/vitest"
import { DateTime, Effect, Option } from "effect"
import { type NewOutboxMessage, Outbox, type OutboxMessage } from "../../application/ports/Outbox.js"
import { Transaction } from "../../application/ports/Transaction.js"
import { PRUNE_START } from "../../domain/Retention.js"
import { AfterFailure } from "../../domain/Webhook.js"
import { databases } from "../support/databases.js"

/**
 * The webhook outbox on every store (docs/operating.md, "Webhooks"): messages claimed by one deliverer
 * each for a lease, in the order written per user and endpoint, answered under their claim only,
 * tried again or dead, sent again by an operator, swept once delivered or dead, and written with
 * the transaction they belong to.
 */

const NOW = Date.UTC(2033, 2, 3, 4, 5, 6, 789)
const SECOND = 1_000
const at = (offset: number) => DateTime.unsafeMake(NOW + offset)

const message = (id: string, user_id: string | null, endpoint = "hooks-1"): NewOutboxMessage => ({
  id,
  endpoint,
  user_id,
  type: "after_register",
  body: JSON.stringify({ type: "after_register", timestamp: "2033-03-03T04:05:06.789Z", data: { id } }),
  created_at: at(0)
})

const ids = (messages: ReadonlyArray<OutboxMessage>) => messages.map((claimed) => claimed.id)
const lease = at(30 * SECOND)

for (const backend of databases) {
  const run = <A, E>(effect: Effect.Effect<A, E, Outbox | Transaction>) =>
    effect.pipe(Effect.provide(backend.repositories()))

  describe.skipIf(backend.skip)(`the webhook outbox (${backend.name})`, () => {
    it.effect("a claim takes the first due message of each user's queue to an endpoint, in the order written", () =>
      run(
        Effect.gen(function* () {
          const outbox = yield* Outbox
          yield* outbox.add([message("a1", "ada"), message("a2", "ada"), message("b1", "bob")])
          yield* outbox.add([message("n1", null), message("n2", null), message("a1-other", "ada", "hooks-2")])
          const claimed = yield* outbox.claim(at(0), lease, 10, "worker-1")
          // a2 waits for a1; messages about nobody have no queue; another endpoint is another queue.
          expect(ids(claimed)).toEqual(["a1", "b1", "n1", "n2", "a1-other"])
          expect(claimed[0]).toMatchObject({ endpoint: "hooks-1", user_id: "ada", type: "after_register", attempts: 1 })
          expect(claimed[0]?.body).toBe(message("a1", "ada").body)
          expect(DateTime.toEpochMillis(claimed[0]?.created_at as DateTime.Utc)).toBe(NOW)
          expect(yield* outbox.claim(at(SECOND), lease, 10, "worker-2")).toEqual([])

          expect(yield* outbox.delivered(claimed[0]?.seq as number, "worker-1", at(SECOND))).toBe(true)
          expect(ids(yield* outbox.claim(at(2 * SECOND), lease, 10, "worker-2"))).toEqual(["a2"])
          expect(yield* outbox.backlog).toEqual({ pending: 5, oldest: Option.some(at(0)), dead: 0 })
        })
      )
    )

    it.effect(
      "a claim holds for its lease; once the lease ends another deliverer takes it, and the old claim changes nothing",
      () =>
        run(
          Effect.gen(function* () {
            const outbox = yield* Outbox
            yield* outbox.add([message("m1", "ada")])
            const [first] = yield* outbox.claim(at(0), lease, 10, "worker-1")
            expect(yield* outbox.claim(at(29 * SECOND), lease, 10, "worker-2")).toEqual([])
            const [again] = yield* outbox.claim(at(31 * SECOND), at(61 * SECOND), 10, "worker-2")
            // The first claim's outcome was never recorded: no try is counted for it.
            expect(again).toMatchObject({ id: "m1", attempts: 1 })
            expect(yield* outbox.delivered(first?.seq as number, "worker-1", at(32 * SECOND))).toBe(false)
            expect(
              yield* outbox.failed(first?.seq as number, "worker-1", AfterFailure.Dead(), "late", at(32 * SECOND))
            ).toBe(false)
            expect(yield* outbox.delivered(again?.seq as number, "worker-2", at(33 * SECOND))).toBe(true)
            // Delivered once: a second answer under the same claim changes nothing either.
            expect(yield* outbox.delivered(again?.seq as number, "worker-2", at(34 * SECOND))).toBe(false)
            expect(yield* outbox.backlog).toEqual({ pending: 0, oldest: Option.none(), dead: 0 })
          })
        )
    )

    it.effect("a failed try waits for its next and holds its user's queue; a dead message lets the queue go on", () =>
      run(
        Effect.gen(function* () {
          const outbox = yield* Outbox
          yield* outbox.add([message("m1", "ada"), message("m2", "ada")])
          const [first] = yield* outbox.claim(at(0), lease, 10, "w")
          const retry = AfterFailure.Retry({ at: at(5 * SECOND) })
          expect(yield* outbox.failed(first?.seq as number, "w", retry, "HTTP 500", at(SECOND))).toBe(true)
          expect(yield* outbox.claim(at(4 * SECOND), lease, 10, "w")).toEqual([])
          const [second] = yield* outbox.claim(at(5 * SECOND), at(35 * SECOND), 10, "w")
          expect(second).toMatchObject({ id: "m1", attempts: 2 })
          expect(
            yield* outbox.failed(second?.seq as number, "w", AfterFailure.Dead(), "HTTP 500", at(6 * SECOND))
          ).toBe(true)
          expect(yield* outbox.backlog).toEqual({ pending: 1, oldest: Option.some(at(0)), dead: 1 })
          expect(ids(yield* outbox.claim(at(6 * SECOND), lease, 10, "w"))).toEqual(["m2"])
        })
      )
    )

    it.effect(
      "an operator sends dead messages again, one by its id or all: due at once, their tries counted afresh",
      () =>
        run(
          Effect.gen(function* () {
            const outbox = yield* Outbox
            yield* outbox.add([message("d1", null), message("d2", null), message("live", null)])
            for (const claimed of yield* outbox.claim(at(0), lease, 2, "w")) {
              yield* outbox.failed(claimed.seq, "w", AfterFailure.Dead(), "gone", at(SECOND))
            }
            expect(yield* outbox.resend({ id: "live" }, at(2 * SECOND))).toBe(0)
            expect(yield* outbox.resend({ id: "d2" }, at(2 * SECOND))).toBe(1)
            const claimed = yield* outbox.claim(at(2 * SECOND), lease, 10, "w")
            expect(claimed.map(({ id, attempts }) => [id, attempts])).toEqual([
              ["d2", 1],
              ["live", 1]
            ])
            expect(yield* outbox.resend("dead", at(3 * SECOND))).toBe(1)
            expect(ids(yield* outbox.claim(at(3 * SECOND), lease, 10, "w"))).toEqual(["d1"])
          })
        )
    )

    it.effect("of racing claims, each message goes to one deliverer", () =>
      run(
        Effect.gen(function* () {
          const outbox = yield* Outbox
          yield* outbox.add(Array.from({ length: 40 }, (_, i) => message(`r${i}`, i % 2 === 0 ? null : `user-${i}`)))
          const claims = yield* Effect.all(
            Array.from({ length: 8 }, (_, worker) => outbox.claim(at(0), lease, 7, `worker-${worker}`)),
            { concurrency: "unbounded" }
          )
          const claimed = claims.flatMap(ids)
          expect(new Set(claimed).size).toBe(claimed.length)
          expect(claimed.length).toBe(40)
        })
      )
    )

    it.effect(
      "the sweep deletes messages delivered, or dead, before its cutoff, in batches from where the last reached",
      () =>
        run(
          Effect.gen(function* () {
            const outbox = yield* Outbox
            yield* outbox.add(["x1", "x2", "x3", "x4"].map((id) => message(id, null)))
            const claimed = yield* outbox.claim(at(0), lease, 10, "w")
            yield* outbox.delivered(claimed[0]?.seq as number, "w", at(1 * SECOND))
            yield* outbox.delivered(claimed[1]?.seq as number, "w", at(2 * SECOND))
            yield* outbox.delivered(claimed[2]?.seq as number, "w", at(9 * SECOND))
            yield* outbox.failed(claimed[3]?.seq as number, "w", AfterFailure.Dead(), "gone", at(3 * SECOND))
            // A dry run counts x1, x2 and x4: x3 was delivered after the cutoff.
            expect(yield* outbox.countSettledBefore(at(5 * SECOND))).toBe(3)
            const first = yield* outbox.prune("delivered", at(5 * SECOND), 1, PRUNE_START)
            expect(first).toEqual({ found: 1, done: 1, reached: NOW + SECOND })
            expect(yield* outbox.prune("delivered", at(5 * SECOND), 10, first.reached)).toEqual({
              found: 1,
              done: 1,
              reached: NOW + 2 * SECOND
            })
            expect((yield* outbox.prune("delivered", at(5 * SECOND), 10, NOW + 2 * SECOND)).found).toBe(0)
            expect(yield* outbox.prune("dead", at(5 * SECOND), 10, PRUNE_START)).toEqual({
              found: 1,
              done: 1,
              reached: NOW + 3 * SECOND
            })
            expect(yield* outbox.backlog).toEqual({ pending: 0, oldest: Option.none(), dead: 0 })
            // x3, delivered after the cutoff, stays: a later sweep takes it.
            expect((yield* outbox.prune("delivered", at(10 * SECOND), 10, PRUNE_START)).done).toBe(1)
          })
        )
    )

    if (backend.name !== "memory") {
      it.effect("a message written in a transaction that fails is never there", () =>
        run(
          Effect.gen(function* () {
            const outbox = yield* Outbox
            const tx = yield* Transaction
            const refused = tx.transaction(
              Effect.zipRight(outbox.add([message("undone", "ada")]), Effect.fail("refused"))
            )
            expect(yield* Effect.flip(refused)).toBe("refused")
            yield* tx.transaction(outbox.add([message("kept", "ada")]))
            expect(ids(yield* outbox.claim(at(0), lease, 10, "w"))).toEqual(["kept"])
          })
        )
      )
    }
  })
}
