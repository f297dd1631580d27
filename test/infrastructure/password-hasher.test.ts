import { describe, expect, it } from "@effect/vitest"
import * as argon2 from "@node-rs/argon2"
import * as bcrypt from "@node-rs/bcrypt"
import { Effect, Exit, Redacted } from "effect"
import { PasswordHasher } from "../../application/ports/PasswordHasher.js"
import * as PasswordHasherArgon2 from "../../infrastructure/crypto/PasswordHasherArgon2.js"

const password = Redacted.make("correct horse battery staple")
const wrong = Redacted.make("correct horse battery stapler")

/** `Algorithm.Argon2i` and `Version.V0x10` of @node-rs/argon2 (const enums, unreadable under isolatedModules). */
const ARGON2I = 1 as argon2.Algorithm
const VERSION_0x10 = 0 as argon2.Version

const hasher = PasswordHasherArgon2.make(PasswordHasherArgon2.recommended)

describe("PasswordHasherArgon2", () => {
  it("recommends OWASP's first argon2id setting: 19 MiB, 2 passes, 1 lane", () => {
    expect(PasswordHasherArgon2.recommended).toEqual({ memoryCost: 19_456, timeCost: 2, parallelism: 1 })
  })

  it.scopedLive("hashes with argon2id at the configured parameters, salted", () =>
    Effect.gen(function* () {
      const service = yield* hasher
      const first = yield* service.hash(password)
      const second = yield* service.hash(password)
      expect(first.startsWith("$argon2id$v=19$m=19456,t=2,p=1$")).toBe(true)
      expect(first).not.toContain(Redacted.value(password))
      expect(second).not.toBe(first)
      const parsed = argon2.parseOptions(first)
      expect(parsed.outputLen).toBe(32)
    })
  )

  it.scopedLive("hashes with the parameters it is given", () =>
    Effect.gen(function* () {
      const service = yield* PasswordHasherArgon2.make({ memoryCost: 8_192, timeCost: 1, parallelism: 1 })
      const hashed = yield* service.hash(password)
      expect(hashed.startsWith("$argon2id$v=19$m=8192,t=1,p=1$")).toBe(true)
      expect(service.needsRehash(hashed)).toBe(false)
    })
  )

  it.scopedLive("verifies the right password and refuses a wrong one", () =>
    Effect.gen(function* () {
      const service = yield* hasher
      const hashed = yield* service.hash(password)
      expect(yield* service.verify(hashed, password)).toBe(true)
      expect(yield* service.verify(hashed, wrong)).toBe(false)
      expect(yield* service.verify(hashed, Redacted.make(""))).toBe(false)
    })
  )

  it.scopedLive("does not ask to rehash a hash it just made", () =>
    Effect.gen(function* () {
      const service = yield* hasher
      expect(service.needsRehash(yield* service.hash(password))).toBe(false)
    })
  )

  it.scopedLive("verifies a bcrypt hash and asks to rehash it", () =>
    Effect.gen(function* () {
      const service = yield* hasher
      const legacy = yield* Effect.promise(() => bcrypt.hash(Redacted.value(password), { cost: 4 }))
      expect(legacy).toMatch(/^\$2[aby]\$04\$/)
      expect(yield* service.verify(legacy, password)).toBe(true)
      expect(yield* service.verify(legacy, wrong)).toBe(false)
      expect(service.needsRehash(legacy)).toBe(true)
    })
  )

  it.scopedLive("verifies an argon2id hash made with other parameters and asks to rehash it", () =>
    Effect.gen(function* () {
      const service = yield* hasher
      const weaker = yield* Effect.promise(() =>
        argon2.hash(Redacted.value(password), { memoryCost: 8_192, timeCost: 1, parallelism: 1 })
      )
      expect(weaker.startsWith("$argon2id$v=19$m=8192,t=1,p=1$")).toBe(true)
      expect(yield* service.verify(weaker, password)).toBe(true)
      expect(yield* service.verify(weaker, wrong)).toBe(false)
      expect(service.needsRehash(weaker)).toBe(true)
    })
  )

  it.scopedLive("asks to rehash when any single parameter differs", () =>
    Effect.gen(function* () {
      const service = yield* hasher
      const base = { memoryCost: 19_456, timeCost: 2, parallelism: 1, outputLen: 32 }
      const variants = [
        { ...base, memoryCost: 19_457 },
        { ...base, timeCost: 3 },
        { ...base, parallelism: 2 },
        { ...base, outputLen: 64 }
      ]
      for (const options of variants) {
        const hashed = yield* Effect.promise(() => argon2.hash(Redacted.value(password), options))
        expect(yield* service.verify(hashed, password)).toBe(true)
        expect(service.needsRehash(hashed)).toBe(true)
      }
      const same = yield* Effect.promise(() => argon2.hash(Redacted.value(password), base))
      expect(service.needsRehash(same)).toBe(false)
    })
  )

  it.scopedLive("verifies an argon2i hash at the same parameters and asks to rehash it", () =>
    Effect.gen(function* () {
      const service = yield* hasher
      const argon2i = yield* Effect.promise(() =>
        argon2.hash(Redacted.value(password), { ...PasswordHasherArgon2.recommended, algorithm: ARGON2I })
      )
      expect(argon2i.startsWith("$argon2i$v=19$m=19456,t=2,p=1$")).toBe(true)
      expect(yield* service.verify(argon2i, password)).toBe(true)
      expect(service.needsRehash(argon2i)).toBe(true)
    })
  )

  it.scopedLive("asks to rehash an argon2id hash of version 0x10", () =>
    Effect.gen(function* () {
      const service = yield* hasher
      const old = yield* Effect.promise(() =>
        argon2.hash(Redacted.value(password), { ...PasswordHasherArgon2.recommended, version: VERSION_0x10 })
      )
      expect(old.startsWith("$argon2id$v=16$")).toBe(true)
      expect(yield* service.verify(old, password)).toBe(true)
      expect(service.needsRehash(old)).toBe(true)
    })
  )

  it.scopedLive("answers false for a hash it cannot read, and never fails", () =>
    Effect.gen(function* () {
      const service = yield* hasher
      const garbage = [
        "",
        "plaintext-password",
        Redacted.value(password),
        "$argon2id$",
        "$argon2id$v=19$m=19456,t=2,p=1$not-base64$!!",
        "$argon2id$v=19$m=abc,t=2,p=1$c2FsdHNhbHRzYWx0$aGFzaA",
        "$argon2xx$v=19$m=19456,t=2,p=1$c2FsdHNhbHRzYWx0c2FsdA$aGFzaGhhc2hoYXNoaGFzaGhhc2hoYXNoaGFzaA",
        "$2b$04$",
        "$2b$99$abcdefghijklmnopqrstuuabcdefghijklmnopqrstuvwxyz01234",
        "$2y$04$tooshort",
        "$pbkdf2-sha256$29000$c2FsdA$aGFzaA",
        "$1$salt$hash"
      ]
      for (const hashed of garbage) {
        const exit = yield* Effect.exit(service.verify(hashed, password))
        expect(Exit.isSuccess(exit) ? exit.value : exit, `verify(${JSON.stringify(hashed)})`).toBe(false)
        expect(service.needsRehash(hashed), `needsRehash(${JSON.stringify(hashed)})`).toBe(true)
      }
    })
  )

  it.scopedLive("verifyNothing completes, whatever the password", () =>
    Effect.gen(function* () {
      const service = yield* hasher
      expect(Exit.isSuccess(yield* Effect.exit(service.verifyNothing(password)))).toBe(true)
      expect(Exit.isSuccess(yield* Effect.exit(service.verifyNothing(Redacted.make(""))))).toBe(true)
    })
  )

  it.scopedLive("the layer provides a working hasher", () =>
    Effect.gen(function* () {
      const service = yield* PasswordHasher
      const hashed = yield* service.hash(password)
      expect(yield* service.verify(hashed, password)).toBe(true)
    }).pipe(Effect.provide(PasswordHasherArgon2.layer()))
  )
})
