import { describe, expect, layer } from "@effect/vitest"
import { Deferred, Effect, Fiber, Ref } from "effect"
import { expectProblem, login, register, uniqueEmail } from "../support/flows.js"
import { makeGatedHasher } from "../support/gatedHasher.js"
import * as TestApp from "../support/TestApp.js"

const wrong = "not the password at all"

const { gate, entered, layer: GatedHasher } = makeGatedHasher()

const expectQueueFull = (reply: TestApp.Reply) => {
  expectProblem(reply, 503, "ServiceUnavailableError")
  expect(reply.headers.get("retry-after")).toBe("1")
}

describe("the hashing queue (HASHING_QUEUE_LIMIT)", () => {
  layer(
    TestApp.layer(
      "memory:",
      { SERVICE_HASHING_QUEUE_LIMIT: "2", SERVICE_MAX_LOGIN_ATTEMPTS: "3" },
      { overrides: GatedHasher }
    ),
    { excludeTestServices: true }
  )((it) => {
    it.effect("past the bound, sign-ins and registrations answer 503 with Retry-After, uncounted", () =>
      Effect.gen(function* () {
        const email = uniqueEmail()
        expect((yield* register(email)).status).toBe(202)
        // Two wrong sign-ins take the queue's two places and wait for their hash.
        const waiting = yield* Effect.fork(Effect.all([login(email, wrong), login(email, wrong)], { concurrency: 2 }))
        while ((yield* Ref.get(entered)) < 2) yield* Effect.sleep("5 millis")

        for (let i = 0; i < 3; i++) expectQueueFull(yield* login(email, wrong))
        expectQueueFull(yield* register(uniqueEmail()))
        // Routes that hash nothing are not queued.
        expectProblem(
          yield* Effect.flatMap(TestApp.TestApp, (app) => app.request("GET", `${app.settings.server.authPrefix}/me`)),
          401,
          "TokenError"
        )

        yield* Deferred.succeed(gate, undefined)
        for (const reply of yield* Fiber.join(waiting)) expectProblem(reply, 401, "AuthenticationError")
        // Only the two admitted attempts counted: the third failure reaches the maximum of 3 and is
        // still a 401, the lock comes after it. Had the five refusals counted, this would be 423.
        expectProblem(yield* login(email, wrong), 401, "AuthenticationError")
        expectProblem(yield* login(email, wrong), 423, "AccountLockedError")
        // The places are given back: a registration is admitted again.
        expect((yield* register(uniqueEmail())).status).toBe(202)
      }).pipe(Effect.ensuring(Deferred.succeed(gate, undefined)))
    )
  })
})

const queued = makeGatedHasher()

describe("the hashing queue and the rate limits", () => {
  layer(
    TestApp.layer(
      "memory:",
      { SERVICE_HASHING_QUEUE_LIMIT: "1", SERVICE_AUTH_RATE_LIMIT_ENABLED: "true", SERVICE_MAX_LOGIN_ATTEMPTS: "100" },
      { overrides: queued.layer }
    ),
    { excludeTestServices: true }
  )((it) => {
    it.effect("a sign-in refused for a full queue is not counted by its bucket", () =>
      Effect.gen(function* () {
        const email = uniqueEmail()
        // The one place is taken: that sign-in is the bucket's first.
        const waiting = yield* Effect.fork(login(email, wrong))
        while ((yield* Ref.get(queued.entered)) < 1) yield* Effect.sleep("5 millis")
        // More refusals than the bucket's 5: had they counted, every later sign-in would be a 429.
        for (let i = 0; i < 6; i++) expectQueueFull(yield* login(email, wrong))
        yield* Deferred.succeed(queued.gate, undefined)
        expectProblem(yield* Fiber.join(waiting), 401, "AuthenticationError")
        const next = yield* login(email, wrong)
        expectProblem(next, 401, "AuthenticationError")
        expect(next.headers.get("ratelimit-remaining")).toBe("3")
      }).pipe(Effect.ensuring(Deferred.succeed(queued.gate, undefined)))
    )
  })
})
