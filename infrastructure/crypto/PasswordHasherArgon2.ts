import { randomBytes } from "node:crypto"
import { availableParallelism } from "node:os"
import * as argon2 from "@node-rs/argon2"
import * as bcrypt from "@node-rs/bcrypt"
import { Effect, Layer, Redacted } from "effect"
import { PasswordHasher } from "../../application/ports/PasswordHasher.js"

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
 * How many hashes may run at once: one a core, and always fewer than libuv's thread pool has
 * threads (UV_THREADPOOL_SIZE, 4 by default). The pool also resolves host names and runs file
 * operations: were every thread hashing, a flood of sign-ins would queue those behind it. More
 * hashes at once than cores would not finish sooner either.
 */
export const hashingSlots = (
  cores = availableParallelism(),
  poolSize = Number(process.env.UV_THREADPOOL_SIZE) || 4
): number => Math.max(1, Math.min(cores, poolSize - 1))

/**
 * Hashes with argon2id and verifies argon2 (any variant and parameters) and bcrypt hashes. The
 * napi functions run on libuv's thread pool, so neither hashing nor verifying blocks the event
 * loop; at most `slots` of them run at once, the others wait their turn.
 */
export const make = (parameters: Argon2Parameters, slots = hashingSlots()) =>
  Effect.gen(function* () {
    const options = { ...parameters, outputLen: OUTPUT_LENGTH }
    const turn = (yield* Effect.makeSemaphore(slots)).withPermits(1)
    const hash = (password: Redacted.Redacted<string>) =>
      turn(Effect.promise(() => argon2.hash(Redacted.value(password), options)))

    const verify = (hashed: string, password: Redacted.Redacted<string>) => {
      if (isArgon2(hashed))
        return turn(Effect.promise(() => argon2.verify(hashed, Redacted.value(password)).catch(() => false)))
      if (isBcrypt(hashed))
        return turn(Effect.promise(() => bcrypt.verify(Redacted.value(password), hashed).catch(() => false)))
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

export const layer = (parameters: Argon2Parameters = recommended) => Layer.effect(PasswordHasher, make(parameters))
