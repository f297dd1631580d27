import { describe, expect, it } from "@effect/vitest"
import { Effect, Option, Redacted } from "effect"
import { Cryptography } from "../../application/ports/Cryptography.js"
import * as CryptographyNode from "../../infrastructure/crypto/CryptographyNode.js"

const secret = Redacted.make("the-deployment-secret-key-0123456789")
const crypto = CryptographyNode.make(secret)

const UUID_V4 = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/

/** The three dot-separated parts of a sealed box. */
const split = (sealed: string) => {
  const [version = "", iv = "", body = ""] = sealed.split(".")
  return { version, iv, body }
}

describe("CryptographyNode", () => {
  describe("digest", () => {
    it("is the hex SHA-256 of the token (FIPS 180-2 test vectors)", () => {
      expect(crypto.digest("abc")).toBe("ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
      expect(crypto.digest("")).toBe("e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855")
    })

    it("is stable, 64 hex characters, differs per input and does not depend on the key", () => {
      const token = "refresh-token-value"
      const digest = crypto.digest(token)
      expect(digest).toMatch(/^[0-9a-f]{64}$/)
      expect(crypto.digest(token)).toBe(digest)
      expect(crypto.digest(`${token}x`)).not.toBe(digest)
      expect(crypto.digest("Refresh-token-value")).not.toBe(digest)
      expect(CryptographyNode.make(Redacted.make("another-key")).digest(token)).toBe(digest)
    })
  })

  describe("randomId", () => {
    it.effect("yields distinct version-4 UUIDs", () =>
      Effect.gen(function* () {
        const ids = yield* Effect.replicateEffect(crypto.randomId, 200)
        for (const id of ids) expect(id).toMatch(UUID_V4)
        expect(new Set(ids).size).toBe(ids.length)
      })
    )
  })

  describe("randomSecret", () => {
    it.effect("yields distinct 256-bit base64url strings", () =>
      Effect.gen(function* () {
        const secrets = yield* Effect.replicateEffect(crypto.randomSecret, 200)
        for (const value of secrets) expect(Buffer.from(value, "base64url")).toHaveLength(32)
        for (const value of secrets) expect(value).toMatch(/^[A-Za-z0-9_-]{43}$/)
        expect(new Set(secrets).size).toBe(secrets.length)
      })
    )
  })

  describe("mac", () => {
    it("is a stable 43-character base64url value, keyed per use and by SECRET_KEY", () => {
      const value = crypto.mac("oauth-pkce", "nonce-1")
      expect(value).toMatch(/^[A-Za-z0-9_-]{43}$/)
      expect(crypto.mac("oauth-pkce", "nonce-1")).toBe(value)
      expect(CryptographyNode.make(secret).mac("oauth-pkce", "nonce-1")).toBe(value)
      expect(crypto.mac("oauth-pkce", "nonce-2")).not.toBe(value)
      expect(crypto.mac("another-use", "nonce-1")).not.toBe(value)
      expect(CryptographyNode.make(Redacted.make("another-key-0123456789")).mac("oauth-pkce", "nonce-1")).not.toBe(
        value
      )
      // Not the bare SHA-256 of the message: without the key it cannot be computed.
      expect(Buffer.from(value, "base64url").toString("hex")).not.toBe(crypto.digest("nonce-1"))
    })
  })

  describe("seal and open", () => {
    it.effect("open answers what was sealed", () =>
      Effect.gen(function* () {
        for (const plaintext of ["access.refresh pair", "", "ünïcödé 🔑", "x".repeat(10_000)]) {
          const sealed = yield* crypto.seal(plaintext)
          expect(crypto.open(sealed)).toEqual(Option.some(plaintext))
        }
      })
    )

    it.effect("a box does not show its plaintext and starts with the version", () =>
      Effect.gen(function* () {
        const sealed = yield* crypto.seal("secret successor pair")
        expect(sealed).not.toContain("secret")
        expect(split(sealed).version).toBe("v1")
        expect(sealed.split(".")).toHaveLength(3)
      })
    )

    it.effect("two seals of the same plaintext differ, and both open", () =>
      Effect.gen(function* () {
        const one = yield* crypto.seal("same plaintext")
        const two = yield* crypto.seal("same plaintext")
        expect(one).not.toBe(two)
        expect(split(one).iv).not.toBe(split(two).iv)
        expect(crypto.open(one)).toEqual(Option.some("same plaintext"))
        expect(crypto.open(two)).toEqual(Option.some("same plaintext"))
      })
    )

    it.effect("a box sealed under another key does not open", () =>
      Effect.gen(function* () {
        const other = CryptographyNode.make(Redacted.make("a-different-secret-key-0123456789"))
        const sealed = yield* other.seal("pair")
        expect(other.open(sealed)).toEqual(Option.some("pair"))
        expect(crypto.open(sealed)).toEqual(Option.none())
        const same = CryptographyNode.make(Redacted.make(Redacted.value(secret)))
        expect(same.open(yield* crypto.seal("pair"))).toEqual(Option.some("pair"))
      })
    )

    it.effect("a box with any byte of its body flipped does not open", () =>
      Effect.gen(function* () {
        const sealed = yield* crypto.seal("a sealed refresh pair")
        const { version, iv, body } = split(sealed)
        const bytes = Buffer.from(body, "base64url")
        for (let index = 0; index < bytes.length; index++) {
          const tampered = Buffer.from(bytes)
          tampered[index] = (tampered[index] ?? 0) ^ 0x80
          expect(crypto.open(`${version}.${iv}.${tampered.toString("base64url")}`), `byte ${index}`).toEqual(
            Option.none()
          )
        }
      })
    )

    it.effect("a box with its IV altered does not open", () =>
      Effect.gen(function* () {
        const { version, iv, body } = split(yield* crypto.seal("pair"))
        const bytes = Buffer.from(iv, "base64url")
        bytes[0] = (bytes[0] ?? 0) ^ 0x01
        expect(crypto.open(`${version}.${bytes.toString("base64url")}.${body}`)).toEqual(Option.none())
      })
    )

    it.effect("a truncated body does not open, even shorter than the 16-byte tag", () =>
      Effect.gen(function* () {
        const { version, iv, body } = split(yield* crypto.seal("a sealed refresh pair"))
        const bytes = Buffer.from(body, "base64url")
        for (const length of [0, 1, 10, 15, 16, bytes.length - 1]) {
          const truncated = bytes.subarray(0, length).toString("base64url")
          expect(crypto.open(`${version}.${iv}.${truncated}`), `length ${length}`).toEqual(Option.none())
        }
      })
    )

    it.effect("the empty plaintext seals to exactly the 16-byte tag and opens", () =>
      Effect.gen(function* () {
        const sealed = yield* crypto.seal("")
        expect(Buffer.from(split(sealed).body, "base64url")).toHaveLength(16)
        expect(crypto.open(sealed)).toEqual(Option.some(""))
      })
    )

    it.effect("a box with another version prefix, or not in three parts, does not open", () =>
      Effect.gen(function* () {
        const sealed = yield* crypto.seal("pair")
        const { iv, body } = split(sealed)
        expect(crypto.open(`v2.${iv}.${body}`)).toEqual(Option.none())
        expect(crypto.open(`V1.${iv}.${body}`)).toEqual(Option.none())
        expect(crypto.open(`.${iv}.${body}`)).toEqual(Option.none())
        expect(crypto.open(`v1.${iv}`)).toEqual(Option.none())
        expect(crypto.open("v1")).toEqual(Option.none())
        expect(crypto.open("")).toEqual(Option.none())
        expect(crypto.open("not a box at all")).toEqual(Option.none())
        expect(crypto.open(sealed)).toEqual(Option.some("pair"))
      })
    )
  })

  describe("deriveKey", () => {
    it("derives a distinct 32-byte key per use and per secret, deterministically", () => {
      const seal = CryptographyNode.deriveKey(secret, "seal/v1")
      expect(seal).toHaveLength(32)
      expect(CryptographyNode.deriveKey(secret, "seal/v1").equals(seal)).toBe(true)
      expect(CryptographyNode.deriveKey(secret, "csrf/v1").equals(seal)).toBe(false)
      expect(CryptographyNode.deriveKey(Redacted.make("other"), "seal/v1").equals(seal)).toBe(false)
    })
  })

  it.effect("the layer provides the same primitives", () =>
    Effect.gen(function* () {
      const service = yield* Cryptography
      const sealed = yield* service.seal("through the layer")
      expect(crypto.open(sealed)).toEqual(Option.some("through the layer"))
      expect(service.digest("abc")).toBe(crypto.digest("abc"))
    }).pipe(Effect.provide(CryptographyNode.layer(secret)))
  )
})
