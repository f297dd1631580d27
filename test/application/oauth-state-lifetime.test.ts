import { describe, expect, it } from "@effect/vitest"
import { Effect, Exit, Layer, TestClock } from "effect"
import { type Flow, OAuthStates } from "../../application/OAuthStates.js"
import type { UserId } from "../../domain/User.js"
import { memoryPorts } from "../support/memoryPorts.js"

const START = Date.UTC(2032, 1, 2, 3, 4, 5)
const LIFETIME = 60
const REDIRECT = "https://app.example/oauth/callback"

/** The OAuth states of a deployment whose states live a minute, with the default 30 s JWT leeway. */
const states = OAuthStates.Default.pipe(
  Layer.provide(memoryPorts(Layer.empty, { SERVICE_OAUTH_STATE_EXPIRE_SECONDS: String(LIFETIME) }).layer)
)

const flows: ReadonlyArray<Flow> = [
  { purpose: "oauth_state" },
  { purpose: "oauth_link_state", caller: "user-1" as UserId }
]

/** On the TestClock at START, set before the stores start: their sweepers would run every minute since 1970. */
const atStart = <A, E>(body: Effect.Effect<A, E, OAuthStates>) =>
  Effect.zipRight(TestClock.setTime(START), Effect.provide(body, states))

describe("the OAuth state's lifetime (OAUTH_STATE_EXPIRE_SECONDS) is exact", () => {
  for (const flow of flows) {
    it.effect(`${flow.purpose}: accepted a second before its end, refused a second after it, within the leeway`, () =>
      atStart(
        Effect.gen(function* () {
          const oauth = yield* OAuthStates
          const early = yield* oauth.issue("google", REDIRECT, flow)
          const late = yield* oauth.issue("google", REDIRECT, flow)

          yield* TestClock.adjust(`${LIFETIME - 1} seconds`)
          const accepted = yield* oauth.accept("google", { state: early.state, binding: early.binding }, flow)
          expect(accepted.codeVerifier).toBe(early.codeVerifier)

          yield* TestClock.adjust("2 seconds")
          const refused = yield* Effect.exit(oauth.accept("google", { state: late.state, binding: late.binding }, flow))
          expect(Exit.isFailure(refused)).toBe(true)
          expect(JSON.stringify(refused)).toContain("The OAuth state is invalid or has expired; start again.")
        })
      )
    )
  }
})
