import { describe, expect, layer } from "@effect/vitest"
import { Deferred, Effect, Ref } from "effect"
import { login, password, register, uniqueEmail } from "../support/flows.js"
import { makeGatedHasher } from "../support/gatedHasher.js"
import * as TestApp from "../support/TestApp.js"

const { gate, entered, layer: GatedHasher } = makeGatedHasher()

/** Signs in until the answer is not 423, for up to about two seconds; answers the last status. */
const statusOnceUnlocked = (email: string) =>
  Effect.gen(function* () {
    let status = 423
    for (let tries = 0; tries < 40 && status === 423; tries++) {
      if (tries > 0) yield* Effect.sleep("50 millis")
      status = (yield* login(email)).status
    }
    return status
  })

describe("a sign-in whose client leaves while its password is verified", () => {
  // With a maximum of 1, every attempt is the one that reaches the limit and sets the lock.
  layer(TestApp.layer("memory:", { SERVICE_MAX_LOGIN_ATTEMPTS: "1" }, { overrides: GatedHasher }), {
    excludeTestServices: true
  })((it) => {
    it.effect("is still decided: the right password leaves no lock behind", () =>
      Effect.gen(function* () {
        const app = yield* TestApp.TestApp
        const email = uniqueEmail()
        expect((yield* register(email)).status).toBe(202)
        const leaving = new AbortController()
        const abandoned = fetch(`${app.url}${app.settings.server.authPrefix}/login`, {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: JSON.stringify({ email, password }),
          signal: leaving.signal
        }).then(
          (response) => response.status,
          () => "left"
        )
        while ((yield* Ref.get(entered)) < 1) yield* Effect.sleep("5 millis")
        leaving.abort()
        expect(yield* Effect.promise(() => abandoned)).toBe("left")
        // The server sees the connection closed and interrupts the request while it is verified.
        yield* Effect.sleep("100 millis")
        yield* Deferred.succeed(gate, undefined)
        expect(yield* statusOnceUnlocked(email)).toBe(200)
      }).pipe(Effect.ensuring(Deferred.succeed(gate, undefined)))
    )
  })
})
