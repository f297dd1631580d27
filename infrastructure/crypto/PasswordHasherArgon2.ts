import { randomBytes } from "node:crypto"
import * as argon2 from "@node-rs/argon2"
import { Effect, Layer, Redacted } from "effect"
import { PasswordHasher } from "../../application/ports/PasswordHasher.js"
import * as HashingThreads from "./hashingThreads.js"

/** argon2id parameters: OWASP's first recommendation (19 MiB, 2 passes, 1 lane). */
export interface Argon2Parameters {
  readonly memoryCost: number
  readonly timeCost: number
  readonly parallelism: number
}

export const recommended: Argon2Parameters = { memoryCost: 19_456, timeCost: 2, parallelism: 1 }

/** `Algorithm.Argon2id` and `Version.V0x13` of @node-rs/argon2, whose const enums isolatedModules cannot read. */
const ARGON2ID = 2
const VERSION_0x13 = 1
const OUTPUT_LENGTH = 32

const isArgon2 = (hashed: string) => hashed.startsWith("$argon2")
const isBcrypt = (hashed: string) => /^\$2[abxy]\$/.test(hashed)

/**
 * Hashes with argon2id and verifies argon2 (any variant and parameters) and bcrypt hashes, on the
 * hashing threads (hashingThreads.ts): never on the event loop, and below its priority.
 */
export const make = (parameters: Argon2Parameters, threads = HashingThreads.hashingThreadCount()) =>
  Effect.gen(function* () {
    const options = { ...parameters, outputLen: OUTPUT_LENGTH }
    const pool = yield* HashingThreads.make(threads)
    const hash = (password: Redacted.Redacted<string>) =>
      pool.run({ op: "hash", password: Redacted.value(password), options }) as Effect.Effect<string>

    const verify = (hashed: string, password: Redacted.Redacted<string>) => {
      if (isArgon2(hashed))
        return pool.run({ op: "verifyArgon2", hashed, password: Redacted.value(password) }) as Effect.Effect<boolean>
      if (isBcrypt(hashed))
        return pool.run({ op: "verifyBcrypt", hashed, password: Redacted.value(password) }) as Effect.Effect<boolean>
      return Effect.succeed(false)
    }

    const needsRehash = (hashed: string) => {
      if (!isArgon2(hashed)) return true
      try {
        const used = argon2.parseOptions(hashed)
        return (
          (used.algorithm as number) !== ARGON2ID ||
          (used.version as number) !== VERSION_0x13 ||
          used.memoryCost !== parameters.memoryCost ||
          used.timeCost !== parameters.timeCost ||
          used.parallelism !== parameters.parallelism ||
          used.outputLen !== OUTPUT_LENGTH
        )
      } catch {
        return true
      }
    }

    // A real hash at the configured cost, of a password nobody knows, for sign-ins without a user.
    const decoy = yield* hash(Redacted.make(randomBytes(32).toString("base64url")))
    const verifyNothing = (password: Redacted.Redacted<string>) => Effect.asVoid(verify(decoy, password))

    return PasswordHasher.of({ hash, verify, needsRehash, verifyNothing })
  })

/** The hasher of one of `workers` processes serving on the machine. */
export const layer = (parameters: Argon2Parameters = recommended, workers = 1) =>
  Layer.scoped(PasswordHasher, make(parameters, HashingThreads.hashingThreadCount(workers)))
