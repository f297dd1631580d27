import { describe, expect, it } from "@effect/vitest"
import { Effect, Either, Layer, Option, Redacted } from "effect"
import { Accounts } from "../../application/Accounts.js"
import { PasswordReset } from "../../application/PasswordReset.js"
import { PasswordSignIn } from "../../application/PasswordSignIn.js"
import { Events } from "../../application/ports/Events.js"
import { PasswordHasher } from "../../application/ports/PasswordHasher.js"
import { TokenSigner } from "../../application/ports/TokenSigner.js"
import { useCases } from "../../composition/application.js"
import { Email } from "../../domain/User.js"
import * as TokenSignerJose from "../../infrastructure/crypto/TokenSignerJose.js"
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
const signerOptions = {
  algorithm: "HS256",
  secretKey: Redacted.make("a-test-secret-key-of-at-least-32-bytes!!"),
  issuer: "portcullis",
  audience: Option.none(),
  leewaySeconds: 30
} as const

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
  it.effect("signs one token whether or not the address belongs to an account, and mails only a known one", () =>
    Effect.gen(function* () {
      const signed: Array<string> = []
      const mailed: Array<string> = []
      const { layer: ports } = memoryPorts(
        Layer.mergeAll(
          Layer.effect(
            TokenSigner,
            Effect.map(TokenSignerJose.make(signerOptions), (real) =>
              TokenSigner.of({
                ...real,
                sign: (claims) =>
                  Effect.zipRight(
                    Effect.sync(() => signed.push(claims.sub)),
                    real.sign(claims)
                  )
              })
            )
          ),
          Layer.succeed(Events, Events.of({ emit: (event) => Effect.sync(() => void mailed.push(event._tag)) }))
        )
      )
      yield* Effect.gen(function* () {
        const accounts = yield* Accounts
        const reset = yield* PasswordReset
        yield* accounts.register(email, password)
        signed.length = 0
        mailed.length = 0
        yield* reset.request("nobody@example.com")
        expect(signed).toHaveLength(1)
        expect(mailed).toEqual([])
        yield* reset.request(email)
        expect(signed).toHaveLength(2)
        expect(mailed).toEqual(["send_password_reset_email"])
      }).pipe(
        Effect.provide(
          Layer.merge(useCases, PasswordReset.Default.pipe(Layer.provide(useCases))).pipe(Layer.provide(ports))
        )
      )
    })
  )
})
