import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer, Option, Redacted, Tracer } from "effect"
import { Accounts } from "../../application/Accounts.js"
import { PasswordSignIn } from "../../application/PasswordSignIn.js"
import { PasswordHasher } from "../../application/ports/PasswordHasher.js"
import { useCases } from "../../composition/application.js"
import { tracing } from "../../composition/observability.js"
import { Email } from "../../domain/User.js"
import { memoryPorts } from "../support/memoryPorts.js"
import { settingsFor, testSecretKey } from "../support/TestApp.js"

const password = Redacted.make("correct horse battery staple")
const email = Email.make("alice@example.com")

/**
 * What the tracer is asked for while a user registers and signs in, under `switched` (a tracing
 * layer), and the span the sign-in's password check runs in, if any.
 */
const signUpAndIn = <E>(switched: Layer.Layer<never, E>) =>
  Effect.gen(function* () {
    const native = yield* Effect.tracer
    const started: Array<string> = []
    // Effect's own tracer, noting each span asked of it.
    const noting = Tracer.make({
      span: (name, ...rest) => {
        started.push(name)
        return native.span(name, ...rest)
      },
      context: (f, fiber) => native.context(f, fiber)
    })
    let checkedIn: Option.Option<string> = Option.none()
    const hasher = PasswordHasher.of({
      hash: (plain) => Effect.succeed(`plain:${Redacted.value(plain)}`),
      verify: (hashed, plain) =>
        Effect.map(Effect.option(Effect.currentSpan), (span) => {
          checkedIn = Option.map(span, ({ name }) => name)
          return hashed === `plain:${Redacted.value(plain)}`
        }),
      needsRehash: () => false,
      verifyNothing: () => Effect.void
    })
    const { layer: ports } = memoryPorts(Layer.succeed(PasswordHasher, hasher))
    yield* Effect.gen(function* () {
      yield* (yield* Accounts).register(email, password)
      yield* (yield* PasswordSignIn).login(email, password, { ip_address: null, user_agent: null })
    }).pipe(Effect.provide(Layer.mergeAll(useCases.pipe(Layer.provide(ports)), switched, Layer.setTracer(noting))))
    return { started, checkedIn }
  })

describe("the use cases' spans (Effect.fn)", () => {
  it.effect("with tracing on, each use case runs in a span of its name: a sign-in's password check in its own", () =>
    Effect.map(signUpAndIn(Layer.setTracerEnabled(true)), ({ started, checkedIn }) => {
      expect(started).toEqual(expect.arrayContaining(["Accounts.register", "PasswordSignIn.login", "Sessions.start"]))
      expect(checkedIn).toEqual(Option.some("PasswordSignIn.login"))
    })
  )

  it.effect("with tracing off, as the composition has it when no exporter is set, the tracer is asked for none", () =>
    Effect.map(signUpAndIn(tracing(settingsFor({ SERVICE_SECRET_KEY: testSecretKey }))), ({ started }) =>
      expect(started).toEqual([])
    )
  )
})
