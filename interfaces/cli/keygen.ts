import { generateKeyPairSync } from "node:crypto"
import { Command, Options } from "@effect/cli"
import { Console, Effect } from "effect"
import { asymmetricAlgorithms } from "../../config/signingKeys.js"
import type { AsymmetricAlgorithm } from "../../domain/Jwks.js"

const generate = (algorithm: AsymmetricAlgorithm) => {
  switch (algorithm) {
    case "EdDSA":
      return generateKeyPairSync("ed25519").privateKey
    case "ES256":
      return generateKeyPairSync("ec", { namedCurve: "P-256" }).privateKey
    case "RS256":
      return generateKeyPairSync("rsa", { modulusLength: 2048 }).privateKey
  }
}

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
    const key = generate(algorithm)
    // jose, under the signer, is for this command and the asymmetric algorithms only.
    const { publicJwk } = yield* Effect.promise(() => import("../../infrastructure/crypto/TokenSignerAsymmetric.js"))
    const jwk = yield* publicJwk({ algorithm, key })
    yield* Console.log(`${key.export({ format: "pem", type: "pkcs8" }).toString().trim()}\n${JSON.stringify(jwk)}`)
  })
).pipe(
  Command.withDescription(
    "Print a new private key for SERVICE_JWT_ALGORITHM (PEM: the value of SERVICE_JWT_PRIVATE_KEY, or the whole output as the file of SERVICE_JWT_PRIVATE_KEY_FILE), then its public JWK with its kid, for SERVICE_JWT_VERIFY_KEYS once the next key replaces it."
  )
)
