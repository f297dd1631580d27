import { describe, expect, layer } from "@effect/vitest"
import { Effect, Option } from "effect"
import { RefreshTokenRepo } from "../../application/ports/RefreshTokenRepo.js"
import { call, expectProblem, me, signUp } from "../support/flows.js"
import { seedSessions } from "../support/seedSessions.js"
import * as TestApp from "../support/TestApp.js"

/**
 * A bulk ending of sessions does not hold the process while it runs: a latency bound, so it runs
 * in `npm run test:timing`, alone (vitest.extra.config.ts), where no other file's load moves what
 * it measures; inside `npm test` a loaded machine made a probe wait, or its connection reset.
 */
describe("ending thousands of sessions keeps the process answering (sqlite file)", () => {
  layer(TestApp.layer(TestApp.sqliteFileBackend()), { excludeTestServices: true })((it) => {
    it.effect(
      "DELETE /me of a user with 5,000 sessions: no /healthz probe every 20 ms waits 100 ms, and nothing of theirs is left",
      () =>
        Effect.gen(function* () {
          const app = yield* TestApp.TestApp
          const caller = yield* signUp("delete-many")
          yield* seedSessions(caller, 5_000, "delete-many")
          const probes: Array<number> = []
          let deleting = true
          // Each probe on a connection of its own: one kept alive since the seeding may be closed by
          // the server's keep-alive timeout just as it is reused, failing the probe for no fault of the route.
          const failures: Array<string> = []
          const probing = Effect.promise(async () => {
            while (deleting) {
              const started = performance.now()
              try {
                const reply = await fetch(`${app.url}/healthz`, { headers: { connection: "close" } })
                await reply.arrayBuffer()
                probes.push(performance.now() - started)
              } catch (error) {
                const cause = (error as { cause?: unknown }).cause
                failures.push(`${String(error)}${cause === undefined ? "" : `: ${String(cause)}`}`)
              }
              await new Promise((resolve) => setTimeout(resolve, 20))
            }
          })
          const fiber = yield* Effect.fork(probing)
          yield* Effect.sleep("100 millis")
          const deleted = yield* call("DELETE", "/me", { token: caller.access })
          deleting = false
          yield* fiber.await
          expect(failures).toEqual([])
          expect(deleted.status).toBe(204)
          expect(probes.length).toBeGreaterThan(3)
          expect(Math.max(...probes)).toBeLessThan(100)

          const repo = yield* RefreshTokenRepo
          expect(yield* repo.findByDigest(`digest-delete-many-${caller.userId}-00000`)).toEqual(Option.none())
          expectProblem(yield* me(caller.access), 401, "TokenError")
        })
    )
  })
})
