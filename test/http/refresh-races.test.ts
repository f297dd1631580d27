import { describe, expect, layer } from "@effect/vitest"
import { Effect } from "effect"
import { expectProblem, me, refresh, signUp } from "../support/flows.js"
import * as TestApp from "../support/TestApp.js"

const concurrentRefreshes = (token: string, count: number) =>
  Effect.all(
    Array.from({ length: count }, () => refresh(token)),
    { concurrency: "unbounded" }
  )

for (const backend of TestApp.backendsWithFile()) {
  describe(`concurrent refreshes, strict rule (${backend.name})`, () => {
    layer(TestApp.layer(backend), { excludeTestServices: true })((it) => {
      // Several rounds of 50: one burst of 10 could miss the interleaving that shows a missing
      // compare-and-swap on the memory store.
      it.effect("50 concurrent refreshes of one token, 4 rounds: exactly one 200, the rest 401", () =>
        Effect.gen(function* () {
          for (let round = 0; round < 4; round++) {
            const session = yield* signUp()
            const replies = yield* concurrentRefreshes(session.refresh, 50)
            const statuses = replies.map((reply) => reply.status)
            expect(statuses.filter((status) => status === 200)).toHaveLength(1)
            expect(statuses.filter((status) => status === 401)).toHaveLength(49)
            // The losers presented a token that was rotated (reuse) or whose session reuse had ended.
            for (const reply of replies.filter((r) => r.status === 401))
              expectProblem(reply, 401, "TokenBlacklistedError")
          }
        })
      )
    })
  })

  describe(`concurrent refreshes with a reuse grace window (${backend.name})`, () => {
    layer(TestApp.layer(backend, { SERVICE_REFRESH_REUSE_GRACE_SECONDS: "10" }), {
      excludeTestServices: true
    })((it) => {
      it.effect("racing refreshes all receive the one successor pair, which then works", () =>
        Effect.gen(function* () {
          const session = yield* signUp()
          const replies = yield* concurrentRefreshes(session.refresh, 10)
          expect(replies.map((reply) => reply.status)).toEqual(Array(10).fill(200))
          const pairs = replies.map((reply) => reply.body as { access_token: string; refresh_token: string })
          expect(new Set(pairs.map((pair) => pair.refresh_token)).size).toBe(1)
          expect(new Set(pairs.map((pair) => pair.access_token)).size).toBe(1)
          const successor = pairs[0]
          if (successor === undefined) return
          expect((yield* me(successor.access_token)).status).toBe(200)
          expect((yield* refresh(successor.refresh_token)).status).toBe(200)
        })
      )

      it.effect("a sequential retry within the window gets the same pair again", () =>
        Effect.gen(function* () {
          const session = yield* signUp()
          const first = yield* refresh(session.refresh)
          const retry = yield* refresh(session.refresh)
          expect(first.status).toBe(200)
          expect(retry.body).toEqual(first.body)
        })
      )
    })
  })
}
