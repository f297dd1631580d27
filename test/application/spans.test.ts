import { readdirSync, readFileSync } from "node:fs"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer, Option, Redacted } from "effect"
import { Accounts } from "../../application/Accounts.js"
import { PasswordSignIn } from "../../application/PasswordSignIn.js"
import { PasswordHasher } from "../../application/ports/PasswordHasher.js"
import { useCases } from "../../composition/application.js"
import { Email } from "../../domain/User.js"
import { memoryPorts } from "../support/memoryPorts.js"

const password = Redacted.make("correct horse battery staple")
const email = Email.make("alice@example.com")

/**
 * The name of the span a sign-in's password check runs under, if any, with the use cases built
 * and run under a tracer that is on or off.
 */
const spanOfSignIn = (tracerEnabled: boolean) =>
  Effect.gen(function* () {
    let seen: Option.Option<string> = Option.none()
    const hasher = PasswordHasher.of({
      hash: (plain) => Effect.succeed(`plain:${Redacted.value(plain)}`),
      verify: (hashed, plain) =>
        Effect.map(Effect.option(Effect.currentSpan), (span) => {
          seen = Option.map(span, ({ name }) => name)
          return hashed === `plain:${Redacted.value(plain)}`
        }),
      needsRehash: () => false,
      verifyNothing: () => Effect.void
    })
    const { layer: ports } = memoryPorts(Layer.succeed(PasswordHasher, hasher))
    yield* Effect.gen(function* () {
      yield* (yield* Accounts).register(email, password)
      yield* (yield* PasswordSignIn).login(email, password, { ip_address: null, user_agent: null })
    }).pipe(
      Effect.provide(useCases.pipe(Layer.provide(ports), Layer.provide(Layer.setTracerEnabled(tracerEnabled)))),
      Effect.withTracerEnabled(tracerEnabled)
    )
    return seen
  })

describe("the use cases' spans", () => {
  it.effect("are recorded under a tracer that is on: a sign-in runs in its span", () =>
    Effect.map(spanOfSignIn(true), (span) => expect(span).toEqual(Option.some("PasswordSignIn.login")))
  )

  it.effect("are not even made under a tracer that is off: a sign-in runs in no span at all", () =>
    Effect.map(spanOfSignIn(false), (span) => expect(span).toEqual(Option.none()))
  )
})

describe("the application layer", () => {
  it("names its spans through `spans` only: an `Effect.fn` would make its span with the tracer off", () => {
    const folder = new URL("../../application/", import.meta.url)
    const direct = readdirSync(folder, { recursive: true, encoding: "utf8" })
      .filter((file) => file.endsWith(".ts") && file !== "spans.ts")
      .filter((file) => /Effect\.fn\(/.test(readFileSync(new URL(file, folder), "utf8")))
    expect(direct).toEqual([])
  })
})
