import { describe, expect, it } from "@effect/vitest"
import { Effect, Redacted } from "effect"
import * as CsrfTokensHmac from "../../infrastructure/crypto/CsrfTokensHmac.js"

const tokens = CsrfTokensHmac.make(Redacted.make("the-deployment-secret-key-0123456789"))
const refreshToken = "header.payload.signature"

describe("CsrfTokensHmac", () => {
  it.effect("a token verifies when echoed for the refresh token it was issued for", () =>
    Effect.gen(function* () {
      const token = yield* tokens.issue(refreshToken)
      expect(token).toMatch(/^[A-Za-z0-9_-]{22}\.[A-Za-z0-9_-]{43}$/)
      expect(tokens.verify({ header: token, cookie: token, refreshToken })).toBe(true)
    })
  )

  it.effect("each issue is fresh, and every one of them verifies", () =>
    Effect.gen(function* () {
      const issued = yield* Effect.replicateEffect(tokens.issue(refreshToken), 20)
      expect(new Set(issued).size).toBe(issued.length)
      for (const token of issued) expect(tokens.verify({ header: token, cookie: token, refreshToken })).toBe(true)
    })
  )

  it.effect("is refused for another refresh token, under another key, or when the header differs", () =>
    Effect.gen(function* () {
      const token = yield* tokens.issue(refreshToken)
      expect(tokens.verify({ header: token, cookie: token, refreshToken: `${refreshToken}x` })).toBe(false)
      const otherKey = CsrfTokensHmac.make(Redacted.make("another-deployment-secret-key-0123456789"))
      expect(otherKey.verify({ header: token, cookie: token, refreshToken })).toBe(false)
      const other = yield* tokens.issue(refreshToken)
      expect(tokens.verify({ header: other, cookie: token, refreshToken })).toBe(false)
      expect(tokens.verify({ header: "", cookie: token, refreshToken })).toBe(false)
    })
  )

  it.effect("refuses malformed and tampered values without throwing", () =>
    Effect.gen(function* () {
      const token = yield* tokens.issue(refreshToken)
      const [nonce = "", mac = ""] = token.split(".")
      const flipped = `${nonce}.${mac.slice(0, -1)}${mac.endsWith("A") ? "B" : "A"}`
      for (const value of ["", ".", "no-dot", `${token}.extra`, `.${mac}`, `${nonce}.`, flipped, `${nonce}x.${mac}`]) {
        expect(tokens.verify({ header: value, cookie: value, refreshToken })).toBe(false)
      }
    })
  )
})
