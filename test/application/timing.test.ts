import { describe, expect, it } from "@effect/vitest"
import { Duration, Effect, Either, Exit, Layer, Redacted, Scope } from "effect"
import { Accounts } from "../../application/Accounts.js"
import { EmailSignIn, SIGN_IN_ANSWER_FLOOR } from "../../application/EmailSignIn.js"
import { PasswordReset, RESET_ANSWER_FLOOR } from "../../application/PasswordReset.js"
import { PasswordSignIn } from "../../application/PasswordSignIn.js"
import { EmailSignInRequests } from "../../application/ports/EmailSignInRequests.js"
import { Events } from "../../application/ports/Events.js"
import { PasswordHasher } from "../../application/ports/PasswordHasher.js"
import { useCases } from "../../composition/application.js"
import { SignInCodeError, StoreUnavailableError } from "../../domain/errors.js"
import { Email } from "../../domain/User.js"
import * as EmailSignInRequestsSql from "../../infrastructure/sql/EmailSignInRequestsSql.js"
import { memoryPorts } from "../support/memoryPorts.js"

/** Counts what the hasher is asked to do; the counts are what an observer's stopwatch would see. */
const countingHasher = Effect.gen(function* () {
  const counts = { hash: 0, verify: 0, verifyNothing: 0 }
  const hasher = PasswordHasher.of({
    hash: (password) => Effect.sync(() => void counts.hash++).pipe(Effect.as(`plain:${Redacted.value(password)}`)),
    verify: (hashed, password) =>
      Effect.sync(() => {
        counts.verify++
        return hashed === `plain:${Redacted.value(password)}`
      }),
    needsRehash: () => false,
    verifyNothing: () => Effect.sync(() => void counts.verifyNothing++)
  })
  return { counts, layer: Layer.succeed(PasswordHasher, hasher) }
})

const withCounts = <A, E>(
  body: (counts: {
    hash: number
    verify: number
    verifyNothing: number
  }) => Effect.Effect<A, E, Accounts | PasswordSignIn>
) =>
  Effect.gen(function* () {
    const { counts, layer } = yield* countingHasher
    const { layer: ports } = memoryPorts(layer)
    return yield* body(counts).pipe(Effect.provide(useCases.pipe(Layer.provide(ports))))
  })

const email = Email.make("alice@example.com")
const password = Redacted.make("correct horse battery staple")
const client = { ip_address: null, user_agent: null }

describe("timing parity of the account use cases", () => {
  it.effect("registering a taken address hashes the password exactly as a new registration does", () =>
    withCounts((counts) =>
      Effect.gen(function* () {
        const accounts = yield* Accounts
        yield* accounts.register(email, password)
        expect(counts.hash).toBe(1)
        const duplicate = yield* accounts.register(email, Redacted.make("some other password"))
        expect(duplicate._tag).toBe("Accepted")
        expect(counts.hash).toBe(2)
      })
    )
  )

  it.effect("an unknown login spends one decoy verification; a known one spends one real verification", () =>
    withCounts((counts) =>
      Effect.gen(function* () {
        const accounts = yield* Accounts
        const signIn = yield* PasswordSignIn
        yield* accounts.register(email, password)
        const unknown = yield* Effect.either(signIn.login("nobody@example.com", password, client))
        expect(Either.isLeft(unknown) && unknown.left._tag).toBe("AuthenticationError")
        expect(counts).toMatchObject({ verify: 0, verifyNothing: 1 })
        const wrong = yield* Effect.either(signIn.login(email, Redacted.make("wrong password"), client))
        expect(Either.isLeft(wrong) && wrong.left._tag).toBe("AuthenticationError")
        expect(counts).toMatchObject({ verify: 1, verifyNothing: 1 })
      })
    )
  )

  it.effect("a policy failure is refused before any hashing", () =>
    withCounts((counts) =>
      Effect.gen(function* () {
        const accounts = yield* Accounts
        const refused = yield* Effect.either(accounts.register(email, Redacted.make("x".repeat(300))))
        expect(Either.isLeft(refused) && refused.left._tag).toBe("InvalidPasswordError")
        expect(counts.hash).toBe(0)
      })
    )
  )
})

describe("timing parity of a password-reset request", () => {
  it.live("answers no sooner than the floor, known address or not, and mails only a known one", () =>
    Effect.gen(function* () {
      const mailed: Array<string> = []
      const { layer: ports } = memoryPorts(
        Layer.succeed(Events, Events.of({ emit: (event) => Effect.sync(() => void mailed.push(event._tag)) }))
      )
      yield* Effect.gen(function* () {
        yield* (yield* Accounts).register(email, password)
        const reset = yield* PasswordReset
        for (const address of ["nobody@example.com", email]) {
          const [took] = yield* Effect.timed(reset.request(address))
          expect(Duration.toMillis(took)).toBeGreaterThanOrEqual(Duration.toMillis(RESET_ANSWER_FLOOR) - 1)
        }
        expect(mailed.filter((tag) => tag === "send_password_reset_email")).toHaveLength(1)
      }).pipe(Effect.provide(PasswordReset.Default.pipe(Layer.provideMerge(useCases), Layer.provide(ports))))
    })
  )
})

/**
 * The known side's work made slower than any floor (a slow disk under its writes): the answer
 * still comes at the floor, the mail follows, and closing the service waits for it.
 */
describe("an even answer does not wait for work slower than its floor", () => {
  const slowMail = 300
  const cases: ReadonlyArray<{
    readonly name: string
    readonly event: string
    readonly floor: Duration.Duration
    readonly ask: (address: string) => Effect.Effect<unknown, unknown, PasswordReset | EmailSignIn>
  }> = [
    {
      name: "password reset",
      event: "send_password_reset_email",
      floor: RESET_ANSWER_FLOOR,
      ask: (address) => Effect.flatMap(PasswordReset, (reset) => reset.request(address))
    },
    {
      name: "sign-in by mail",
      event: "send_sign_in_email",
      floor: SIGN_IN_ANSWER_FLOOR,
      ask: (address) => Effect.flatMap(EmailSignIn, (signIn) => signIn.request(Email.make(address)))
    }
  ]

  for (const { name, event, floor, ask } of cases) {
    it.live(`${name}: answered at the floor, mailed after, the mail awaited at shutdown`, () =>
      Effect.gen(function* () {
        const mailed: Array<string> = []
        const { layer: ports } = memoryPorts(
          Layer.succeed(
            Events,
            Events.of({
              emit: (sent) =>
                sent._tag === event
                  ? Effect.sleep(Duration.millis(slowMail)).pipe(Effect.andThen(() => void mailed.push(sent._tag)))
                  : Effect.void
            })
          )
        )
        const scope = yield* Scope.make()
        const context = yield* Layer.buildWithScope(
          Layer.mergeAll(PasswordReset.Default, EmailSignIn.Default).pipe(
            Layer.provideMerge(useCases),
            Layer.provide(ports)
          ),
          scope
        )
        const answered = yield* Effect.gen(function* () {
          yield* (yield* Accounts).register(email, password)
          const [unknown] = yield* Effect.timed(ask("nobody@example.com"))
          const [known] = yield* Effect.timed(ask(email))
          return { unknown: Duration.toMillis(unknown), known: Duration.toMillis(known) }
        }).pipe(Effect.provide(context))
        expect(answered.known).toBeGreaterThanOrEqual(Duration.toMillis(floor) - 1)
        expect(answered.known).toBeLessThan(slowMail / 2)
        expect(answered.unknown).toBeLessThan(slowMail / 2)
        expect(mailed).toEqual([])
        yield* Scope.close(scope, Exit.void)
        expect(mailed).toEqual([event])
      })
    )
  }
})

describe("an even answer does not tell the known side's failure", () => {
  it.live("a reset whose mail fails answers as one whose mail is sent", () =>
    Effect.gen(function* () {
      const { layer: ports } = memoryPorts(
        Layer.succeed(
          Events,
          Events.of({
            emit: (sent) => (sent._tag === "send_password_reset_email" ? Effect.die("the mailer is down") : Effect.void)
          })
        )
      )
      const outcomes = yield* Effect.gen(function* () {
        yield* (yield* Accounts).register(email, password)
        const reset = yield* PasswordReset
        return [yield* Effect.exit(reset.request("nobody@example.com")), yield* Effect.exit(reset.request(email))]
      }).pipe(Effect.provide(PasswordReset.Default.pipe(Layer.provideMerge(useCases), Layer.provide(ports))))
      expect(outcomes.map(Exit.isSuccess)).toEqual([true, true])
    })
  )
})

/**
 * The count of a wrong sign-in code made slower than the floor (a slow disk under its writes): a
 * refused code is answered at the floor, a live request or none, the count lands after, and
 * closing the service waits for it.
 */
describe("a refused sign-in code does not wait for its count", () => {
  const slowCount = 300

  /** The store's own requests, their counts of wrong codes made slow, and what was counted once each landed. */
  const slowCounts = (counted: Array<string>) =>
    Layer.effect(
      EmailSignInRequests,
      Effect.map(EmailSignInRequestsSql.make, (store) =>
        EmailSignInRequests.of({
          ...store,
          countWrongCode: (address, now, maxAttempts) =>
            store.countWrongCode(address, now, maxAttempts).pipe(
              Effect.delay(Duration.millis(slowCount)),
              Effect.tap((count) => Effect.sync(() => void counted.push(`${address} ${count._tag}`)))
            )
        })
      )
    )

  /** Events that keep each mailed sign-in code. */
  const mailedCodes = (codes: Array<string>) =>
    Layer.succeed(
      Events,
      Events.of({
        emit: (event) => Effect.sync(() => void (event._tag === "send_sign_in_email" && codes.push(event.code)))
      })
    )

  it.live("a wrong code on a live request and one for an unknown address: answered at the floor, counted after", () =>
    Effect.gen(function* () {
      const counted: Array<string> = []
      const codes: Array<string> = []
      const { layer: ports } = memoryPorts(Layer.merge(slowCounts(counted), mailedCodes(codes)))
      const scope = yield* Scope.make()
      const context = yield* Layer.buildWithScope(
        EmailSignIn.Default.pipe(Layer.provideMerge(useCases), Layer.provide(ports)),
        scope
      )
      const answered = yield* Effect.gen(function* () {
        yield* (yield* Accounts).register(email, password)
        const signIn = yield* EmailSignIn
        yield* signIn.request(email)
        // The mail is handed on just after the answer.
        for (let wait = 0; wait < 100 && codes.length === 0; wait++) yield* Effect.sleep(Duration.millis(5))
        const wrong = codes[0] === "000000" ? "111111" : "000000"
        const [known, knownExit] = yield* Effect.timed(Effect.exit(signIn.confirmCode(email, wrong, client)))
        const [unknown, unknownExit] = yield* Effect.timed(
          Effect.exit(signIn.confirmCode(Email.make("nobody@example.com"), wrong, client))
        )
        return { known: Duration.toMillis(known), unknown: Duration.toMillis(unknown), knownExit, unknownExit }
      }).pipe(Effect.provide(context))
      for (const exit of [answered.knownExit, answered.unknownExit]) {
        expect(exit).toStrictEqual(Exit.fail(new SignInCodeError()))
      }
      for (const took of [answered.known, answered.unknown]) {
        expect(took).toBeGreaterThanOrEqual(Duration.toMillis(SIGN_IN_ANSWER_FLOOR) - 1)
        expect(took).toBeLessThan(slowCount / 2)
      }
      expect(counted).toEqual([])
      yield* Scope.close(scope, Exit.void)
      expect(counted.sort()).toEqual([`${email} Counted`, "nobody@example.com NoRequest"])
    })
  )

  it.live("a store that is down fails a code alike, for a live request and for an unknown address", () =>
    Effect.gen(function* () {
      const down = new StoreUnavailableError({ store: "database" })
      const failingTakes = Layer.effect(
        EmailSignInRequests,
        Effect.map(EmailSignInRequestsSql.make, (store) =>
          EmailSignInRequests.of({ ...store, takeByCode: () => Effect.fail(down) })
        )
      )
      const { layer: ports } = memoryPorts(failingTakes)
      const exits = yield* Effect.gen(function* () {
        yield* (yield* Accounts).register(email, password)
        const signIn = yield* EmailSignIn
        yield* signIn.request(email)
        return [
          yield* Effect.exit(signIn.confirmCode(email, "000000", client)),
          yield* Effect.exit(signIn.confirmCode(Email.make("nobody@example.com"), "000000", client))
        ]
      }).pipe(Effect.provide(EmailSignIn.Default.pipe(Layer.provideMerge(useCases), Layer.provide(ports))))
      expect(exits).toStrictEqual([Exit.fail(down), Exit.fail(down)])
    })
  )
})
