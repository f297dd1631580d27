import { Command, Options } from "@effect/cli"
import { Console, Effect } from "effect"
import { asymmetricAlgorithms } from "../../config/signingKeys.js"
import { Host } from "./host.js"

const algorithm = Options.choice("algorithm", asymmetricAlgorithms).pipe(
  Options.withDefault("EdDSA" as const),
  Options.withDescription("The SERVICE_JWT_ALGORITHM the key signs with.")
)

/**
 * A new signing key: its PEM (PKCS#8), the value of JWT_PRIVATE_KEY, then its public JWK with
 * its kid on one line, for JWT_VERIFY_KEYS once the next key replaces it. The whole output can
 * be the key's file: the line after the PEM block is not read as part of the key.
 */
export const keygen = Command.make("keygen", { algorithm }, ({ algorithm }) =>
  Effect.gen(function* () {
    const { pem, jwk } = yield* (yield* Host).newSigningKey(algorithm)
    yield* Console.log(`${pem}\n${JSON.stringify(jwk)}`)
  })
).pipe(
  Command.withDescription(
    "Print a new private key for SERVICE_JWT_ALGORITHM (PEM: the value of SERVICE_JWT_PRIVATE_KEY, or the whole output as the file of SERVICE_JWT_PRIVATE_KEY_FILE), then its public JWK with its kid, for SERVICE_JWT_VERIFY_KEYS once the next key replaces it."
  )
)
