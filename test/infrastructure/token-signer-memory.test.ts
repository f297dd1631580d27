import * as crypto from "node:crypto"
import { describe, expect, it } from "@effect/vitest"
import { DateTime, Duration, Effect, Option, Redacted, TestClock } from "effect"
import { vi } from "vitest"
import { TokenError } from "../../domain/errors.js"
import { type TokenClaims, tokenWindow } from "../../domain/Token.js"
import * as TokenSignerHmac from "../../infrastructure/crypto/TokenSignerHmac.js"

// `npm test` and `npm run test:quick` run files one after another in one process: the modules under test may
// have been loaded there already, without the mock below. They are loaded again for this file.
vi.hoisted(() => vi.resetModules())

vi.mock("node:crypto", async (original) => {
  const actual = await original<typeof import("node:crypto")>()
  return { ...actual, createHmac: vi.fn(actual.createHmac) }
})

const macs = () => vi.mocked(crypto.createHmac).mock.calls.length

const signer = TokenSignerHmac.make({
  algorithm: "HS256",
  secretKey: Redacted.make("a-test-secret-key-of-at-least-32-bytes!!"),
  issuer: "portcullis-test",
  audience: Option.none(),
  leewaySeconds: 10
})

const tokenOf = (type: TokenClaims["type"]) =>
  Effect.gen(function* () {
    yield* TestClock.setTime(Date.UTC(2031, 4, 6))
    const made = yield* signer
    const now = yield* DateTime.now
    const claims: TokenClaims = {
      sub: "user-42",
      jti: `jti-${type}`,
      type,
      family_id: "family-42",
      ...tokenWindow(now, Duration.seconds(60))
    }
    return { made, token: yield* made.sign(claims) }
  })

const withSignature = (token: string, signature: string) => `${token.slice(0, token.lastIndexOf(".") + 1)}${signature}`
const flipped = (token: string) => {
  const bytes = Buffer.from(token.slice(token.lastIndexOf(".") + 1), "base64url")
  bytes[3] = (bytes[3] ?? 0) ^ 0x01
  return withSignature(token, bytes.toString("base64url"))
}

/**
 * An access token is presented on every call for its life: the signature its input must carry is
 * remembered once seen, and compared in constant time as before, without the HMAC again. Nothing
 * a forger sends is remembered, and refresh tokens, used once, are not either.
 */
describe("the signatures of access tokens presented again", () => {
  it.effect("are computed once: the same token is verified again without another HMAC", () =>
    Effect.gen(function* () {
      const { made, token } = yield* tokenOf("access")
      yield* made.verify(token, "access")
      const before = macs()
      expect(yield* made.verify(token, "access")).toMatchObject({ jti: "jti-access" })
      expect(macs()).toBe(before)
    })
  )

  it.effect("still refuse a wrong signature on a remembered input, and the right one still verifies after", () =>
    Effect.gen(function* () {
      const { made, token } = yield* tokenOf("access")
      yield* made.verify(token, "access")
      expect(yield* Effect.flip(made.verify(flipped(token), "access"))).toBeInstanceOf(TokenError)
      expect(yield* Effect.flip(made.verify(withSignature(token, ""), "access"))).toBeInstanceOf(TokenError)
      expect(yield* made.verify(token, "access")).toMatchObject({ jti: "jti-access" })
    })
  )

  it.effect(
    "are not remembered from a forgery: an input first seen with a wrong signature costs the HMAC each time",
    () =>
      Effect.gen(function* () {
        const { made, token } = yield* tokenOf("access")
        const forged = flipped(token)
        const before = macs()
        yield* Effect.flip(made.verify(forged, "access"))
        yield* Effect.flip(made.verify(forged, "access"))
        expect(macs()).toBe(before + 2)
        expect(yield* made.verify(token, "access")).toMatchObject({ jti: "jti-access" })
        expect(macs()).toBe(before + 3)
      })
  )

  it.effect("are not remembered for refresh tokens: each presentation computes the HMAC", () =>
    Effect.gen(function* () {
      const { made, token } = yield* tokenOf("refresh")
      const before = macs()
      yield* made.verify(token, "refresh")
      yield* made.verify(token, "refresh")
      expect(macs()).toBe(before + 2)
    })
  )
})
