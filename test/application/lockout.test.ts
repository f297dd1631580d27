import { describe, expect, it } from "@effect/vitest"
import { Deferred, Effect, Either, Fiber, HashMap, Layer, Logger, Redacted, TestClock } from "effect"
import { Accounts } from "../../application/Accounts.js"
import { PasswordSignIn } from "../../application/PasswordSignIn.js"
import { AttemptCounter } from "../../application/ports/AttemptCounter.js"
import { PasswordHasher } from "../../application/ports/PasswordHasher.js"
import { StoreUnavailableError } from "../../application/ports/StoreUnavailableError.js"
import { useCases } from "../../composition/application.js"
import { Email } from "../../domain/User.js"
import * as AttemptCounterMemory from "../../infrastructure/memory/AttemptCounterMemory.js"
import { bounded } from "../../infrastructure/storeTimeout.js"
import { memoryPorts } from "../support/memoryPorts.js"

const START = Date.UTC(2032, 1, 2, 3, 4, 5)
const secret = "correct horse battery staple"
const password = Redacted.make(secret)
const wrong = Redacted.make("not the password at all")
const email = Email.make("alice@example.com")
const client = { ip_address: null, user_agent: null }

interface Logged {
  readonly level: string
  readonly message: string
  readonly annotations: Record<string, unknown>
}

/** A store that never answers, as Redis down would be. */
const failingCounter = Layer.succeed(
  AttemptCounter,
  AttemptCounter.of({
    attempt: () => Effect.fail(new StoreUnavailableError({ store: "attempts" })),
    clear: () => Effect.fail(new StoreUnavailableError({ store: "attempts" }))
  })
)

/**
 * The memory store, except that clearing a count waits on a frozen database: a call that never
 * answers, bounded by the store timeout as every database call is.
 */
const frozenOnClear = Layer.effect(
  AttemptCounter,
  Effect.map(AttemptCounter, (counter) =>
    AttemptCounter.of({ ...counter, clear: () => bounded("database")(Effect.never) })
  )
).pipe(Layer.provide(AttemptCounterMemory.layer))

/**
 * The account use cases on memory adapters and the TestClock, with a hasher that counts its
 * verifications (plain-text "hashes", so that tests run fast) and a logger that keeps every line.
 */
const run = <A, E>(
  body: (world: {
    readonly verifications: () => number
    readonly logs: ReadonlyArray<Logged>
  }) => Effect.Effect<A, E, Accounts | PasswordSignIn>,
  options: {
    readonly env?: Record<string, string>
    readonly counter?: Layer.Layer<AttemptCounter>
    /** Waited on by the n-th verification (from 1) before it answers. */
    readonly hold?: (verification: number) => Effect.Effect<void>
  } = {}
) =>
  Effect.gen(function* () {
    yield* TestClock.setTime(START)
    let started = 0
    let verifications = 0
    const logs: Array<Logged> = []
    const hasher = PasswordHasher.of({
      hash: (plain) => Effect.succeed(`plain:${Redacted.value(plain)}`),
      // Yields, as the real hasher does while a thread hashes, so that concurrent sign-ins
      // interleave; uninterruptible as the real one, whose hash runs to its end once begun.
      verify: (hashed, plain) =>
        Effect.uninterruptible(
          Effect.zipRight(
            Effect.suspend(() => options.hold?.(++started) ?? Effect.yieldNow()),
            Effect.sync(() => {
              verifications++
              return hashed === `plain:${Redacted.value(plain)}`
            })
          )
        ),
      needsRehash: () => false,
      verifyNothing: () => Effect.sync(() => void verifications++)
    })
    const { layer: ports } = memoryPorts(
      Layer.mergeAll(Layer.succeed(PasswordHasher, hasher), options.counter ?? AttemptCounterMemory.layer),
      options.env
    )
    const capture = Logger.add(
      Logger.make(({ logLevel, message, annotations }) => {
        logs.push({
          level: logLevel.label,
          message: (Array.isArray(message) ? message : [message]).map(String).join(" "),
          annotations: Object.fromEntries(HashMap.toEntries(annotations))
        })
      })
    )
    return yield* body({ verifications: () => verifications, logs }).pipe(
      Effect.provide(useCases.pipe(Layer.provide(ports))),
      Effect.provide(capture)
    )
  })

const signIn = (identifier: string, secretValue = password) =>
  Effect.flatMap(PasswordSignIn, (signIn) => Effect.either(signIn.login(identifier, secretValue, client)))

const registered = Effect.flatMap(Accounts, (accounts) => accounts.register(email, password))

const failureTag = (result: Either.Either<unknown, { readonly _tag: string }>) =>
  Either.isLeft(result) ? result.left._tag : "success"

describe("lockout in PasswordSignIn.login", () => {
  it.effect("the fifth failure still answers 401; then even the right password is refused as locked, unverified", () =>
    run(({ verifications }) =>
      Effect.gen(function* () {
        yield* registered
        for (let i = 0; i < 5; i++) expect(failureTag(yield* signIn(email, wrong))).toBe("AuthenticationError")
        expect(verifications()).toBe(5)
        const locked = yield* signIn(email)
        expect(Either.isLeft(locked) && locked.left).toMatchObject({
          _tag: "AccountLockedError",
          retryAfterSeconds: 15 * 60
        })
        expect(verifications()).toBe(5)
      })
    )
  )

  it.effect(
    "concurrent attempts cannot slip past the limit: of 10 at once, 5 are verified and 5 refused as locked",
    () =>
      run(({ verifications }) =>
        Effect.gen(function* () {
          yield* registered
          const results = yield* Effect.all(
            Array.from({ length: 10 }, () => signIn(email, wrong)),
            { concurrency: "unbounded" }
          )
          expect(results.map(failureTag).sort()).toEqual([
            ...new Array(5).fill("AccountLockedError"),
            ...new Array(5).fill("AuthenticationError")
          ])
          expect(verifications()).toBe(5)
        })
      )
  )

  it.effect("the lock ends LOCKOUT_DURATION_MINUTES after the failure that set it", () =>
    run(
      () =>
        Effect.gen(function* () {
          yield* registered
          for (let i = 0; i < 3; i++) yield* signIn(email, wrong)
          yield* TestClock.adjust("599 seconds")
          const locked = yield* signIn(email)
          expect(Either.isLeft(locked) && locked.left).toMatchObject({
            _tag: "AccountLockedError",
            retryAfterSeconds: 1
          })
          yield* TestClock.adjust("1 second")
          expect(failureTag(yield* signIn(email))).toBe("success")
        }),
      { env: { SERVICE_MAX_LOGIN_ATTEMPTS: "3", SERVICE_LOCKOUT_DURATION_MINUTES: "10" } }
    )
  )

  it.effect("an unknown identifier locks exactly like a known one", () =>
    run(({ verifications }) =>
      Effect.gen(function* () {
        yield* registered
        for (let i = 0; i < 5; i++) {
          expect(failureTag(yield* signIn(email, wrong))).toBe("AuthenticationError")
          expect(failureTag(yield* signIn("nobody@example.com", wrong))).toBe("AuthenticationError")
        }
        expect(verifications()).toBe(10)
        const known = yield* Effect.flip(Effect.flatMap(PasswordSignIn, (s) => s.login(email, password, client)))
        const unknown = yield* Effect.flip(
          Effect.flatMap(PasswordSignIn, (s) => s.login("nobody@example.com", password, client))
        )
        expect(unknown).toEqual(known)
        expect(known._tag).toBe("AccountLockedError")
        expect(verifications()).toBe(10)
      })
    )
  )

  it.effect("failures count per normalised identifier: case and spaces do not make a new one", () =>
    run(() =>
      Effect.gen(function* () {
        yield* registered
        for (const spelling of [
          "Alice@Example.com",
          " alice@example.com ",
          "ALICE@EXAMPLE.COM",
          "alice@example.com "
        ]) {
          yield* signIn(spelling, wrong)
        }
        expect(failureTag(yield* signIn("alice@EXAMPLE.com", wrong))).toBe("AuthenticationError")
        expect(failureTag(yield* signIn(email))).toBe("AccountLockedError")
      })
    )
  )

  it.effect("a successful sign-in clears the count", () =>
    run(() =>
      Effect.gen(function* () {
        yield* registered
        for (let i = 0; i < 4; i++) yield* signIn(email, wrong)
        expect(failureTag(yield* signIn(email))).toBe("success")
        for (let i = 0; i < 4; i++) yield* signIn(email, wrong)
        expect(failureTag(yield* signIn(email))).toBe("success")
      })
    )
  )

  /**
   * The fifth sign-in, the one that reaches the limit and so sets the lock, is cut short by its
   * client while its password is verified: `fifth` is its password, and what a sign-in with the
   * right password answers afterwards is returned.
   */
  const cutShortFifth = (fifth: Redacted.Redacted<string>) => {
    const arrived = Effect.runSync(Deferred.make<void>())
    const open = Effect.runSync(Deferred.make<void>())
    return run(
      () =>
        Effect.gen(function* () {
          yield* registered
          for (let i = 0; i < 4; i++) yield* signIn(email, wrong)
          const cut = yield* Effect.fork(signIn(email, fifth))
          yield* Deferred.await(arrived)
          const leaving = yield* Effect.fork(Fiber.interrupt(cut))
          yield* Deferred.succeed(open, undefined)
          yield* Fiber.join(leaving)
          return failureTag(yield* signIn(email))
        }),
      {
        hold: (verification) =>
          verification === 5 ? Effect.zipRight(Deferred.succeed(arrived, undefined), Deferred.await(open)) : Effect.void
      }
    )
  }

  it.effect("a sign-in cut short by its client is still decided: the right password clears the lock it set", () =>
    Effect.map(cutShortFifth(password), (afterwards) => expect(afterwards).toBe("success"))
  )

  it.effect("a wrong password cut short by its client still counts: the lock it set stays", () =>
    Effect.map(cutShortFifth(wrong), (afterwards) => expect(afterwards).toBe("AccountLockedError"))
  )

  it.effect(
    "a store that freezes inside a guarded sign-in is still given up at the store timeout: the sign-in goes on",
    () =>
      run(
        ({ logs }) =>
          Effect.gen(function* () {
            yield* registered
            const signingIn = yield* Effect.fork(signIn(email))
            yield* TestClock.adjust("4999 millis")
            expect(yield* Fiber.poll(signingIn)).toEqual(expect.objectContaining({ _tag: "None" }))
            yield* TestClock.adjust("1 millis")
            expect(failureTag(yield* Fiber.join(signingIn))).toBe("success")
            expect(logs.some((line) => line.message.includes("lockout skipped: could not clear"))).toBe(true)
          }),
        { counter: frozenOnClear }
      )
  )

  it.effect("a lockout is logged once, at warning level, naming the identifier and never the password", () =>
    run(({ logs }) =>
      Effect.gen(function* () {
        yield* registered
        for (let i = 0; i < 6; i++) yield* signIn(" Alice@example.com", wrong)
        const warnings = logs.filter((line) => line.level === "WARN")
        expect(warnings).toHaveLength(1)
        expect(warnings[0]?.message).toContain("locked")
        expect(warnings[0]?.annotations).toMatchObject({ identifier: "alice@example.com", failures: 5 })
        expect(JSON.stringify(logs)).not.toContain(Redacted.value(wrong))
      })
    )
  )

  it.effect("with LOCKOUT_ENABLED=false, failures never lock", () =>
    run(
      () =>
        Effect.gen(function* () {
          yield* registered
          for (let i = 0; i < 10; i++) expect(failureTag(yield* signIn(email, wrong))).toBe("AuthenticationError")
          expect(failureTag(yield* signIn(email))).toBe("success")
        }),
      { env: { SERVICE_LOCKOUT_ENABLED: "false" } }
    )
  )

  it.effect("a failing attempt store fails open: sign-in goes on as without lockout, with warnings logged", () =>
    run(
      ({ logs }) =>
        Effect.gen(function* () {
          yield* registered
          for (let i = 0; i < 6; i++) expect(failureTag(yield* signIn(email, wrong))).toBe("AuthenticationError")
          expect(failureTag(yield* signIn(email))).toBe("success")
          const warnings = logs.filter((line) => line.level === "WARN")
          expect(warnings.length).toBe(7)
          expect(warnings.every((line) => line.message.includes("lockout skipped"))).toBe(true)
        }),
      { counter: failingCounter }
    )
  )
})
