import { describe, expect, it } from "@effect/vitest"
import { DateTime, Effect, Option } from "effect"
import { EmailSignInRequests } from "../../application/ports/EmailSignInRequests.js"
import { type EmailSignInRequest, WrongCodeCount } from "../../domain/EmailSignIn.js"
import { databases } from "../support/databases.js"

/**
 * The pending sign-ins by mail on every store (domain/EmailSignIn.ts): one request per address,
 * taken at most once by its link or its code, a wrong code taking nothing, the last wrong code
 * counted voiding it, and swept once expired.
 */

const NOW = Date.UTC(2033, 2, 3, 4, 5, 6, 789)
const MINUTE = 60_000
const at = (offset: number) => DateTime.unsafeMake(NOW + offset)

const request = (email: string, overrides: Partial<EmailSignInRequest> = {}): EmailSignInRequest => ({
  email,
  token_digest: `token-of-${email}`,
  code_digest: `code-of-${email}`,
  fields: {},
  attempts: 0,
  created_at: at(0),
  expires_at: at(15 * MINUTE),
  ...overrides
})

for (const backend of databases) {
  const run = <A, E>(effect: Effect.Effect<A, E, EmailSignInRequests>) =>
    effect.pipe(Effect.provide(backend.repositories()))

  describe.skipIf(backend.skip)(`pending sign-ins by mail (${backend.name})`, () => {
    it.effect("a link's digest takes its request once, fields and times as stored", () =>
      run(
        Effect.gen(function* () {
          const requests = yield* EmailSignInRequests
          const stored = request("ada@example.com", { fields: { nickname: "Ada", age: 36 } })
          yield* requests.replace(stored)
          const taken = yield* requests.takeByToken(stored.token_digest, at(MINUTE))
          expect(Option.map(taken, (found) => ({ ...found }))).toEqual(Option.some(stored))
          expect(yield* requests.takeByToken(stored.token_digest, at(MINUTE))).toEqual(Option.none())
          expect(yield* requests.takeByCode(stored.email, stored.code_digest, at(MINUTE), 5)).toEqual(Option.none())
        })
      )
    )

    it.effect("a newer request replaces the address's earlier one: its link and code are void", () =>
      run(
        Effect.gen(function* () {
          const requests = yield* EmailSignInRequests
          const first = request("bob@example.com")
          yield* requests.replace(first)
          yield* requests.replace(
            request("bob@example.com", { token_digest: "newer-token", code_digest: "newer-code" })
          )
          expect(yield* requests.takeByToken(first.token_digest, at(MINUTE))).toEqual(Option.none())
          expect(yield* requests.takeByCode(first.email, first.code_digest, at(MINUTE), 5)).toEqual(Option.none())
          const taken = yield* requests.takeByCode(first.email, "newer-code", at(MINUTE), 5)
          expect(Option.map(taken, (found) => found.token_digest)).toEqual(Option.some("newer-token"))
        })
      )
    )

    it.effect("a wrong code takes nothing; counted, the fifth voids the request, the right code included", () =>
      run(
        Effect.gen(function* () {
          const requests = yield* EmailSignInRequests
          const stored = request("cy@example.com")
          yield* requests.replace(stored)
          for (const left of [4, 3, 2, 1]) {
            expect(yield* requests.takeByCode(stored.email, "wrong", at(MINUTE), 5)).toEqual(Option.none())
            expect(yield* requests.countWrongCode(stored.email, at(MINUTE), 5)).toEqual(
              WrongCodeCount.Counted({ attemptsLeft: left })
            )
          }
          expect(yield* requests.countWrongCode(stored.email, at(MINUTE), 5)).toEqual(WrongCodeCount.Voided())
          expect(yield* requests.takeByCode(stored.email, stored.code_digest, at(MINUTE), 5)).toEqual(Option.none())
          expect(yield* requests.takeByToken(stored.token_digest, at(MINUTE))).toEqual(Option.none())
          expect(yield* requests.countWrongCode(stored.email, at(MINUTE), 5)).toEqual(WrongCodeCount.NoRequest())
        })
      )
    )

    it.effect("of twenty wrong codes counted at once, four are counted, one voids, the rest find nothing", () =>
      run(
        Effect.gen(function* () {
          const requests = yield* EmailSignInRequests
          const stored = request("cyd@example.com")
          yield* requests.replace(stored)
          const counts = yield* Effect.all(
            Array.from({ length: 20 }, () => requests.countWrongCode(stored.email, at(MINUTE), 5)),
            { concurrency: "unbounded" }
          )
          const left = counts.flatMap((count) => (count._tag === "Counted" ? [count.attemptsLeft] : []))
          expect(left.sort()).toEqual([1, 2, 3, 4])
          expect(counts.filter((count) => count._tag === "Voided")).toHaveLength(1)
          expect(counts.filter((count) => count._tag === "NoRequest")).toHaveLength(15)
          expect(yield* requests.takeByCode(stored.email, stored.code_digest, at(MINUTE), 5)).toEqual(Option.none())
        })
      )
    )

    it.effect("an address without a request: a code takes nothing and its count finds nothing", () =>
      run(
        Effect.gen(function* () {
          const requests = yield* EmailSignInRequests
          yield* requests.replace(request("other@example.com"))
          expect(yield* requests.takeByCode("nobody@example.com", "code-of-other@example.com", at(MINUTE), 5)).toEqual(
            Option.none()
          )
          expect(yield* requests.countWrongCode("nobody@example.com", at(MINUTE), 5)).toEqual(
            WrongCodeCount.NoRequest()
          )
          const other = yield* requests.takeByCode("other@example.com", "code-of-other@example.com", at(MINUTE), 5)
          expect(Option.map(other, (found) => found.attempts)).toEqual(Option.some(0))
        })
      )
    )

    it.effect("the right code after wrong ones takes the request; a replaced request starts its count anew", () =>
      run(
        Effect.gen(function* () {
          const requests = yield* EmailSignInRequests
          yield* requests.replace(request("di@example.com"))
          yield* requests.countWrongCode("di@example.com", at(MINUTE), 5)
          yield* requests.countWrongCode("di@example.com", at(MINUTE), 5)
          yield* requests.replace(request("di@example.com", { token_digest: "again", code_digest: "again-code" }))
          expect(yield* requests.countWrongCode("di@example.com", at(MINUTE), 5)).toEqual(
            WrongCodeCount.Counted({ attemptsLeft: 4 })
          )
          const taken = yield* requests.takeByCode("di@example.com", "again-code", at(MINUTE), 5)
          expect(Option.map(taken, (found) => found.attempts)).toEqual(Option.some(1))
        })
      )
    )

    it.effect("an expired request signs nobody in, by link or code", () =>
      run(
        Effect.gen(function* () {
          const requests = yield* EmailSignInRequests
          const stored = request("ed@example.com")
          yield* requests.replace(stored)
          expect(yield* requests.takeByCode(stored.email, stored.code_digest, at(15 * MINUTE), 5)).toEqual(
            Option.none()
          )
          expect(yield* requests.countWrongCode(stored.email, at(15 * MINUTE), 5)).toEqual(WrongCodeCount.NoRequest())
          expect(yield* requests.takeByToken(stored.token_digest, at(15 * MINUTE))).toEqual(Option.none())
        })
      )
    )

    it.effect("of racing takes by the right code, one gets the request", () =>
      run(
        Effect.gen(function* () {
          const requests = yield* EmailSignInRequests
          const stored = request("flo@example.com")
          yield* requests.replace(stored)
          const taken = yield* Effect.all(
            Array.from({ length: 8 }, () => requests.takeByCode(stored.email, stored.code_digest, at(MINUTE), 5)),
            { concurrency: "unbounded" }
          )
          expect(taken.filter(Option.isSome)).toHaveLength(1)
        })
      )
    )

    it.effect("of racing takes of one link, one gets the request", () =>
      run(
        Effect.gen(function* () {
          const requests = yield* EmailSignInRequests
          const stored = request("fay@example.com")
          yield* requests.replace(stored)
          const taken = yield* Effect.all(
            Array.from({ length: 8 }, () => requests.takeByToken(stored.token_digest, at(MINUTE))),
            { concurrency: "unbounded" }
          )
          expect(taken.filter(Option.isSome)).toHaveLength(1)
        })
      )
    )

    it.effect("the sweep deletes expired requests only, in batches, and a dry run counts them", () =>
      run(
        Effect.gen(function* () {
          const requests = yield* EmailSignInRequests
          for (const name of ["g1", "g2", "g3"]) {
            yield* requests.replace(request(`${name}@example.com`, { expires_at: at(-MINUTE) }))
          }
          yield* requests.replace(request("live@example.com"))
          expect(yield* requests.countExpired(at(0))).toBe(3)
          expect(yield* requests.deleteExpired(at(0), 2)).toBe(2)
          expect(yield* requests.deleteExpired(at(0), 2)).toBe(1)
          expect(yield* requests.deleteExpired(at(0), 2)).toBe(0)
          expect(Option.isSome(yield* requests.takeByToken("token-of-live@example.com", at(MINUTE)))).toBe(true)
        })
      )
    )
  })
}
