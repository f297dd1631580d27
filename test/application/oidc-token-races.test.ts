import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { describe, expect, it } from "@effect/vitest"
import { DateTime, Effect, Either, Layer } from "effect"
import { Token } from "../../application/oidc/Token.js"
import { OidcGrants } from "../../application/ports/OidcGrants.js"
import { memoryPorts } from "../support/memoryPorts.js"
import { basic, codeFor, errorOf, providerWorld, redeem, setUp } from "../support/oidcTokens.js"
import * as Postgres from "../support/postgres.js"

/**
 * A store as `serve` opens it (its fast adapters included: on a SQLite file the code is read on a
 * connection that only reads, beside the client's transaction that claims it; on PostgreSQL a
 * named statement on the pool).
 */
const stores = [
  { name: "memory", skip: false, url: Effect.succeed("memory:") },
  {
    name: "sqlite file",
    skip: false,
    url: Effect.map(
      Effect.acquireRelease(
        Effect.sync(() => mkdtempSync(join(tmpdir(), "portcullis-races-"))),
        (folder) => Effect.sync(() => rmSync(folder, { recursive: true, force: true }))
      ),
      (folder) => `sqlite:${join(folder, "portcullis.db")}`
    )
  },
  { name: "postgresql", skip: Postgres.noPostgres, url: Effect.map(Postgres.freshSchemaUrl, ({ url }) => url) }
]

// On the live clock: the ports a deployment builds start timers of their own, which the test clock would never let run.
for (const store of stores) {
  const world = Layer.unwrapScoped(
    Effect.map(store.url, (url) => providerWorld(memoryPorts(Layer.empty, { SERVICE_DATABASE_URL: url }).layer))
  )

  describe.skipIf(store.skip)(`Token under racing requests (${store.name})`, () => {
    it.live(
      "one code redeemed by racing requests: at most one answers, every other is invalid_grant, no grant of the code is left live",
      () =>
        Effect.gen(function* () {
          const session = yield* setUp
          const code = yield* codeFor(session, "openid offline_access")
          const outcomes = yield* Effect.all(
            Array.from({ length: 8 }, () => Effect.either(redeem(code))),
            { concurrency: "unbounded" }
          )
          const answered = outcomes.filter(Either.isRight).map((outcome) => outcome.right)
          const refused = outcomes.filter(Either.isLeft).map((outcome) => outcome.left)
          expect(answered.length).toBeLessThanOrEqual(1)
          expect(refused.map((error) => ("error" in error ? error.error : error._tag))).toEqual(
            Array.from({ length: 8 - answered.length }, () => "invalid_grant")
          )
          // A code presented more than once leaked: what its first use issued has ended.
          const grants = yield* OidcGrants
          expect(yield* grants.liveOfUser(session.user_id, yield* DateTime.now)).toEqual([])
          for (const tokens of answered) {
            const refresh = Effect.flatMap(Token, (token) =>
              token.exchange({ grant_type: "refresh_token", refresh_token: tokens.refresh_token ?? "" }, basic)
            )
            expect(yield* errorOf(refresh)).toBe("invalid_grant")
          }
        }).pipe(Effect.provide(world))
    )

    it.live(
      "one refresh token presented by racing requests: at most one rotation answers, every other is invalid_grant",
      () =>
        Effect.gen(function* () {
          const session = yield* setUp
          const issued = yield* redeem(yield* codeFor(session, "openid offline_access"))
          const refresh = Effect.flatMap(Token, (token) =>
            token.exchange({ grant_type: "refresh_token", refresh_token: issued.refresh_token ?? "" }, basic)
          )
          const outcomes = yield* Effect.all(
            Array.from({ length: 8 }, () => Effect.either(refresh)),
            { concurrency: "unbounded" }
          )
          const answered = outcomes.filter(Either.isRight)
          expect(answered.length).toBeLessThanOrEqual(1)
          expect(outcomes.filter(Either.isLeft).map(({ left }) => ("error" in left ? left.error : left._tag))).toEqual(
            Array.from({ length: 8 - answered.length }, () => "invalid_grant")
          )
        }).pipe(Effect.provide(world))
    )
  })
}
