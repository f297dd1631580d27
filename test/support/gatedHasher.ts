import { Deferred, Effect, Layer, Redacted, Ref } from "effect"
import { PasswordHasher } from "../../application/ports/PasswordHasher.js"

/**
 * A password hasher whose verifications wait at a gate the test opens: `entered` counts those
 * that reached it. Hashes are the password in plain text, so only the waiting is under test.
 */
export const makeGatedHasher = () => {
  const gate = Effect.runSync(Deferred.make<void>())
  const entered = Effect.runSync(Ref.make(0))
  const arrive = Ref.update(entered, (n) => n + 1).pipe(Effect.zipRight(Deferred.await(gate)))
  const layer = Layer.succeed(
    PasswordHasher,
    PasswordHasher.of({
      hash: (password) => Effect.succeed(`plain$${Redacted.value(password)}`),
      verify: (hashed, password) => Effect.as(arrive, hashed === `plain$${Redacted.value(password)}`),
      needsRehash: () => false,
      verifyNothing: () => arrive
    })
  )
  return { gate, entered, layer }
}
