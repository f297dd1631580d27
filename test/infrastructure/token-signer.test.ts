import { createHmac } from "node:crypto"
import { describe, expect, it } from "@effect/vitest"
import { DateTime, Duration, Effect, Option, Redacted, TestClock } from "effect"
import { CompactSign, compactVerify } from "jose"
import { TokenError, TokenExpiredError } from "../../domain/errors.js"
import { type TokenClaims, tokenWindow } from "../../domain/Token.js"
import * as TokenSignerHmac from "../../infrastructure/crypto/TokenSignerHmac.js"

const SECRET = "a-test-secret-key-of-at-least-32-bytes!!"
const ISSUER = "portcullis-test"
const LEEWAY = 10
const START = Date.UTC(2031, 4, 6, 7, 8, 9, 500)

const options = (overrides: Partial<TokenSignerHmac.SignerOptions> = {}): TokenSignerHmac.SignerOptions => ({
  algorithm: "HS256",
  secretKey: Redacted.make(SECRET),
  issuer: ISSUER,
  audience: Option.none(),
  leewaySeconds: LEEWAY,
  ...overrides
})

/** Claims issued at the TestClock's current time, living 60 s. */
const claimsNow = (overrides: Partial<TokenClaims> = {}) =>
  Effect.map(
    DateTime.now,
    (now): TokenClaims => ({
      sub: "user-42",
      jti: "jti-42",
      type: "access",
      family_id: "family-42",
      ...tokenWindow(now, Duration.seconds(60)),
      ...overrides
    })
  )

const encoder = new TextEncoder()
const base64url = (value: unknown) => Buffer.from(JSON.stringify(value)).toString("base64url")
const parts = (token: string) => {
  const [header = "", payload = "", signature = ""] = token.split(".")
  return { header, payload, signature }
}
const decodePart = (part: string): Record<string, unknown> => JSON.parse(Buffer.from(part, "base64url").toString())

/** Signs any JSON with the test secret, bypassing the signer (for payloads it would never produce). */
const signRaw = (payload: unknown, alg = "HS256", secret = SECRET) =>
  Effect.promise(() =>
    new CompactSign(encoder.encode(JSON.stringify(payload)))
      .setProtectedHeader({ alg, typ: "JWT" })
      .sign(encoder.encode(secret))
  )

const refusal = <A, E>(effect: Effect.Effect<A, E>) => Effect.flip(effect)

describe("TokenSignerHmac", () => {
  it.effect("sign then verify answers the claims, with the issuer stamped and the defaults filled", () =>
    Effect.gen(function* () {
      yield* TestClock.setTime(START)
      const signer = yield* TokenSignerHmac.make(options())
      const { sub, jti, iat, exp } = yield* claimsNow()
      // A purpose outside sessions, so that no family is needed and its default shows.
      const claims: TokenClaims = { sub, jti, iat, exp, type: "verify_email" }
      const token = yield* signer.sign(claims)
      expect(token.split(".")).toHaveLength(3)
      expect(decodePart(parts(token).header)).toEqual({ alg: "HS256", typ: "JWT" })

      const payload = yield* signer.verify(token, "verify_email")
      expect(payload).toEqual({ ...claims, iss: ISSUER, roles: [], extra: {}, family_id: null })
      expect(payload.aud).toBeUndefined()
    })
  )

  it.effect("keeps roles, extra and family_id, and stamps the audience when one is configured", () =>
    Effect.gen(function* () {
      yield* TestClock.setTime(START)
      const signer = yield* TokenSignerHmac.make(options({ audience: Option.some("portcullis-api") }))
      const claims = yield* claimsNow({
        type: "refresh",
        roles: ["admin", "auditor"],
        extra: { tenant: "acme", level: 3 },
        family_id: "family-7"
      })
      const payload = yield* signer.verify(yield* signer.sign(claims), "refresh")
      expect(payload).toEqual({ ...claims, iss: ISSUER, aud: "portcullis-api" })
    })
  )

  it.effect("refuses a token presented for another purpose", () =>
    Effect.gen(function* () {
      yield* TestClock.setTime(START)
      const signer = yield* TokenSignerHmac.make(options())
      const token = yield* signer.sign(yield* claimsNow({ type: "password_reset" }))
      const error = yield* refusal(signer.verify(token, "access"))
      expect(error).toBeInstanceOf(TokenError)
      expect(yield* signer.verify(token, "password_reset")).toMatchObject({ type: "password_reset" })
    })
  )

  it.effect("refuses a token whose payload was altered", () =>
    Effect.gen(function* () {
      yield* TestClock.setTime(START)
      const signer = yield* TokenSignerHmac.make(options())
      const token = yield* signer.sign(yield* claimsNow())
      const { header, payload, signature } = parts(token)
      const forged = base64url({ ...decodePart(payload), sub: "someone-else", roles: ["admin"] })
      expect(yield* refusal(signer.verify(`${header}.${forged}.${signature}`, "access"))).toBeInstanceOf(TokenError)
    })
  )

  it.effect("refuses a token whose signature was altered", () =>
    Effect.gen(function* () {
      yield* TestClock.setTime(START)
      const signer = yield* TokenSignerHmac.make(options())
      const token = yield* signer.sign(yield* claimsNow())
      const { header, payload, signature } = parts(token)
      const bytes = Buffer.from(signature, "base64url")
      bytes[5] = (bytes[5] ?? 0) ^ 0x01
      const flipped = bytes.toString("base64url")
      expect(flipped).not.toBe(signature)
      expect(yield* refusal(signer.verify(`${header}.${payload}.${flipped}`, "access"))).toBeInstanceOf(TokenError)
      expect(yield* refusal(signer.verify(`${header}.${payload}.`, "access"))).toBeInstanceOf(TokenError)
    })
  )

  it.effect("refuses a token signed with another secret", () =>
    Effect.gen(function* () {
      yield* TestClock.setTime(START)
      const signer = yield* TokenSignerHmac.make(options())
      const other = yield* TokenSignerHmac.make(options({ secretKey: Redacted.make(`${SECRET}-rotated`) }))
      const token = yield* other.sign(yield* claimsNow())
      expect(yield* other.verify(token, "access")).toMatchObject({ sub: "user-42" })
      expect(yield* refusal(signer.verify(token, "access"))).toBeInstanceOf(TokenError)
    })
  )

  it.effect("pins the algorithm: an HS512 token with the same secret is refused by an HS256 signer", () =>
    Effect.gen(function* () {
      yield* TestClock.setTime(START)
      const hs256 = yield* TokenSignerHmac.make(options())
      const hs512 = yield* TokenSignerHmac.make(options({ algorithm: "HS512" }))
      const token = yield* hs512.sign(yield* claimsNow())
      expect(decodePart(parts(token).header)).toMatchObject({ alg: "HS512" })
      expect(yield* hs512.verify(token, "access")).toMatchObject({ sub: "user-42" })
      expect(yield* refusal(hs256.verify(token, "access"))).toBeInstanceOf(TokenError)
      const back = yield* hs256.sign(yield* claimsNow())
      expect(yield* refusal(hs512.verify(back, "access"))).toBeInstanceOf(TokenError)
    })
  )

  it.effect("refuses an unsigned token (alg none)", () =>
    Effect.gen(function* () {
      yield* TestClock.setTime(START)
      const signer = yield* TokenSignerHmac.make(options())
      const claims = { ...(yield* claimsNow()), iss: ISSUER }
      const unsigned = `${base64url({ alg: "none", typ: "JWT" })}.${base64url(claims)}.`
      expect(yield* refusal(signer.verify(unsigned, "access"))).toBeInstanceOf(TokenError)
      // The same claims, properly signed, pass: the refusal is about the missing signature.
      expect(yield* signer.verify(yield* signRaw(claims), "access")).toMatchObject({ sub: "user-42" })
    })
  )

  it.effect("refuses strings that are not compact JWS", () =>
    Effect.gen(function* () {
      const signer = yield* TokenSignerHmac.make(options())
      for (const token of ["", "not-a-token", "a.b", "a.b.c", "..", "a.b.c.d"]) {
        expect(yield* refusal(signer.verify(token, "access")), token).toBeInstanceOf(TokenError)
      }
    })
  )

  it.effect("refuses a correctly signed payload that lacks required claims or has the wrong types", () =>
    Effect.gen(function* () {
      yield* TestClock.setTime(START)
      const signer = yield* TokenSignerHmac.make(options())
      const complete = { ...(yield* claimsNow()), iss: ISSUER }
      expect(yield* signer.verify(yield* signRaw(complete), "access")).toMatchObject({ sub: "user-42" })

      const { jti: _jti, ...withoutJti } = complete
      const { sub: _sub, ...withoutSub } = complete
      const { exp: _exp, ...withoutExp } = complete
      const { iss: _iss, ...withoutIss } = complete
      const broken: ReadonlyArray<unknown> = [
        withoutJti,
        withoutSub,
        withoutExp,
        withoutIss,
        { ...complete, type: "superpower" },
        { ...complete, exp: "tomorrow" },
        { ...complete, iat: 1.5 },
        "just a string",
        []
      ]
      for (const payload of broken) {
        const error = yield* refusal(signer.verify(yield* signRaw(payload), "access"))
        expect(error, JSON.stringify(payload)).toBeInstanceOf(TokenError)
      }
    })
  )

  it.effect("refuses a token signed with the right key for another issuer or without the expected audience", () =>
    Effect.gen(function* () {
      yield* TestClock.setTime(START)
      const signer = yield* TokenSignerHmac.make(options({ audience: Option.some("portcullis-api") }))
      const otherIssuer = yield* TokenSignerHmac.make(
        options({ issuer: "elsewhere", audience: Option.some("portcullis-api") })
      )
      const noAudience = yield* TokenSignerHmac.make(options())
      const claims = yield* claimsNow()
      expect(yield* refusal(signer.verify(yield* otherIssuer.sign(claims), "access"))).toBeInstanceOf(TokenError)
      expect(yield* refusal(signer.verify(yield* noAudience.sign(claims), "access"))).toBeInstanceOf(TokenError)
    })
  )

  it.effect("reads the Effect clock: valid until exp + leeway - 1 s, expired from exp + leeway", () =>
    Effect.gen(function* () {
      yield* TestClock.setTime(START)
      const signer = yield* TokenSignerHmac.make(options())
      const claims = yield* claimsNow()
      expect(claims.exp - claims.iat).toBe(60)
      const token = yield* signer.sign(claims)

      yield* TestClock.setTime((claims.exp + LEEWAY - 1) * 1000)
      expect(yield* signer.verify(token, "access")).toMatchObject({ jti: "jti-42" })
      yield* TestClock.adjust(Duration.millis(999))
      expect(yield* signer.verify(token, "access")).toMatchObject({ jti: "jti-42" })
      yield* TestClock.adjust(Duration.millis(1))
      expect(yield* refusal(signer.verify(token, "access"))).toBeInstanceOf(TokenExpiredError)
      yield* TestClock.adjust("1 day")
      expect(yield* refusal(signer.verify(token, "access"))).toBeInstanceOf(TokenExpiredError)
    })
  )

  it.effect("refuses a token issued further in the future than the leeway", () =>
    Effect.gen(function* () {
      yield* TestClock.setTime(START)
      const signer = yield* TokenSignerHmac.make(options())
      const now = yield* claimsNow()
      const early = yield* signer.sign({ ...now, iat: now.iat + LEEWAY + 1, exp: now.exp + LEEWAY + 1 })
      expect(yield* refusal(signer.verify(early, "access"))).toBeInstanceOf(TokenError)
      const slightlyEarly = yield* signer.sign({ ...now, iat: now.iat + LEEWAY - 1 })
      expect(yield* signer.verify(slightlyEarly, "access")).toMatchObject({ jti: "jti-42" })
    })
  )

  it.effect("interoperates with jose: its tokens verify here, and ours verify there", () =>
    Effect.gen(function* () {
      yield* TestClock.setTime(START)
      const signer = yield* TokenSignerHmac.make(options())
      const claims = yield* claimsNow()
      const byJose = yield* signRaw({ ...claims, iss: ISSUER })
      expect(yield* signer.verify(byJose, "access")).toMatchObject({ sub: "user-42", jti: "jti-42" })
      const ours = yield* signer.sign(claims)
      const checked = yield* Effect.promise(() =>
        compactVerify(ours, encoder.encode(SECRET), { algorithms: ["HS256"] })
      )
      expect(JSON.parse(new TextDecoder().decode(checked.payload))).toMatchObject({ sub: "user-42", iss: ISSUER })
    })
  )

  it.effect("accepts only its own headers and the canonical spelling of the signature", () =>
    Effect.gen(function* () {
      yield* TestClock.setTime(START)
      const signer = yield* TokenSignerHmac.make(options())
      const claims = { ...(yield* claimsNow()), iss: ISSUER }
      const token = yield* signer.sign(yield* claimsNow())
      const { payload, signature } = parts(token)
      /** A token with `header`, correctly signed with the test secret. */
      const withHeader = (header: Record<string, unknown>) =>
        Effect.sync(() => {
          const input = `${base64url(header)}.${base64url(claims)}`
          return `${input}.${createHmac("sha256", SECRET).update(input).digest("base64url")}`
        })
      // Its own header, and the one access tokens carried before the keys were separated.
      for (const header of [
        { alg: "HS256", typ: "at+jwt" },
        { alg: "HS256", typ: "JWT" }
      ]) {
        expect(yield* signer.verify(yield* withHeader(header), "access")).toMatchObject({ jti: "jti-42" })
      }
      for (const header of [
        { alg: "HS256" },
        { typ: "at+jwt", alg: "HS256" },
        { typ: "JWT", alg: "HS256" },
        { alg: "HS256", typ: "application/at+jwt" },
        { alg: "HS256", typ: "at+jwt", kid: "other" },
        { alg: "HS256", typ: "JWT", kid: "other" },
        { alg: "HS256", typ: "at+jwt", crit: ["exp"], exp: 1 }
      ]) {
        expect(yield* refusal(signer.verify(yield* withHeader(header), "access"))).toBeInstanceOf(TokenError)
      }
      for (const variant of [
        `${token}=`,
        `${token}.`,
        `${token} `,
        `${parts(token).header}.${payload}.${signature.slice(0, -1)}`,
        `${parts(token).header}.${payload}.${signature}*`,
        `${parts(token).header}.${payload}`,
        `${parts(token).header}..${signature}`
      ]) {
        expect(yield* refusal(signer.verify(variant, "access"))).toBeInstanceOf(TokenError)
      }
      expect(yield* signer.verify(token, "access")).toMatchObject({ jti: "jti-42" })
    })
  )
})

describe("the claims of access tokens presented again", () => {
  it.effect("are decoded once: the same token answers the very claims it answered before", () =>
    Effect.gen(function* () {
      yield* TestClock.setTime(START)
      const signer = yield* TokenSignerHmac.make(options())
      const token = yield* signer.sign(yield* claimsNow({ jti: "remembered" }))
      const first = yield* signer.verify(token, "access")
      expect(yield* signer.verify(token, "access")).toBe(first)
    })
  )

  it.effect("are still held to the signature, the purpose and the clock on every presentation", () =>
    Effect.gen(function* () {
      yield* TestClock.setTime(START)
      const signer = yield* TokenSignerHmac.make(options())
      const claims = yield* claimsNow({ jti: "held" })
      const token = yield* signer.sign(claims)
      expect(yield* signer.verify(token, "access")).toMatchObject({ jti: "held" })
      const { header, payload, signature } = parts(token)
      const flipped = Buffer.from(signature, "base64url")
      flipped[0] = (flipped[0] ?? 0) ^ 0x01
      expect(
        yield* refusal(signer.verify(`${header}.${payload}.${flipped.toString("base64url")}`, "access"))
      ).toBeInstanceOf(TokenError)
      const rotated = yield* TokenSignerHmac.make(options({ secretKey: Redacted.make(`${SECRET}-rotated`) }))
      expect(yield* refusal(rotated.verify(token, "access"))).toBeInstanceOf(TokenError)
      expect(yield* refusal(signer.verify(token, "refresh"))).toBeInstanceOf(TokenError)
      yield* TestClock.setTime((claims.exp + LEEWAY) * 1000)
      expect(yield* refusal(signer.verify(token, "access"))).toBeInstanceOf(TokenExpiredError)
    })
  )

  it.effect("are kept for access tokens only: a refresh token, used once, is decoded each time", () =>
    Effect.gen(function* () {
      yield* TestClock.setTime(START)
      const signer = yield* TokenSignerHmac.make(options())
      const token = yield* signer.sign(yield* claimsNow({ jti: "once", type: "refresh" }))
      const first = yield* signer.verify(token, "refresh")
      const second = yield* signer.verify(token, "refresh")
      expect(second).toEqual(first)
      expect(second).not.toBe(first)
    })
  )
})
