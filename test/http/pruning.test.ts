import { describe, expect, layer } from "@effect/vitest"
import { Effect } from "effect"
import { Pruning } from "../../application/Pruning.js"
import { call, expectProblem, me, refresh, signIn, signUp } from "../support/flows.js"
import * as TestApp from "../support/TestApp.js"

/**
 * A sweep (docs/operating.md, "Data over time") beside the sessions it must leave as they are: what
 * still protects stays until its purpose has ended.
 */
for (const backend of TestApp.backendsWithFile()) {
  describe(`a sweep beside live and just-ended sessions (${backend.name})`, () => {
    layer(TestApp.layer(backend, { SERVICE_REFRESH_REUSE_GRACE_SECONDS: "0" }), { excludeTestServices: true })((it) => {
      it.effect(
        "keeps what still protects: a rotated token presented late is reuse, an ended session's access token is refused, a live session goes on",
        () =>
          Effect.gen(function* () {
            const user = yield* signUp("sweep")
            const rotated = yield* refresh(user.refresh)
            expect(rotated.status).toBe(200)
            const successor = rotated.body as { access_token: string }
            const ended = yield* signIn(user.email)
            expect((yield* call("POST", "/logout", { token: ended.access })).status).toBe(204)
            const other = yield* signIn(user.email)

            const report = yield* Effect.flatMap(Pruning, (pruning) => pruning.prune())
            expect(report).toEqual({
              refreshTokens: 0,
              sessions: 0,
              sealedSuccessors: 0,
              auditEvents: 0,
              signInRequests: 0,
              addressChanges: 0,
              webhookMessages: 0,
              providerCodes: 0,
              parkedRequests: 0,
              providerGrants: 0,
              idleClients: 0
            })

            expectProblem(yield* me(ended.access), 401, "TokenBlacklistedError")
            // The first token, rotated and not expired, is still known: presented again, it is
            // reuse, and the session it belongs to ends.
            expectProblem(yield* refresh(user.refresh), 401, "TokenBlacklistedError")
            expectProblem(yield* me(successor.access_token), 401, "TokenBlacklistedError")
            expect((yield* me(other.access)).status).toBe(200)
            expect((yield* refresh(other.refresh)).status).toBe(200)
          })
      )
    })
  })
}
