import { describe, expect, it } from "@effect/vitest"
import { DateTime, Duration, Effect, Either, Option, TestClock } from "effect"
import { TokenError, TokenExpiredError } from "../../domain/errors.js"
import { type ClaimExpectations, checkClaims, type TokenPayload, tokenWindow } from "../../domain/Token.js"

const ISSUER = "portcullis-test"
/** Issued-at of the tokens below, in seconds. */
const IAT = 1_900_000_000
const TTL = 60
const EXP = IAT + TTL

const payload = (overrides: Partial<TokenPayload> = {}): TokenPayload => ({
  sub: "user-1",
  iat: IAT,
  exp: EXP,
  jti: "jti-1",
  type: "access",
  roles: [],
  extra: {},
  family_id: "family-1",
  iss: ISSUER,
  ...overrides
})

/** Claim expectations at the TestClock's current time. */
const expectations = (overrides: Partial<Omit<ClaimExpectations, "now">> = {}) =>
  Effect.map(
    DateTime.now,
    (now): ClaimExpectations => ({
      purpose: "access",
      issuer: ISSUER,
      audience: Option.none(),
      leewaySeconds: 30,
      ...overrides,
      now
    })
  )

const check = (claims: TokenPayload, overrides: Partial<Omit<ClaimExpectations, "now">> = {}) =>
  Effect.map(expectations(overrides), (expect) => checkClaims(claims, expect))

const failureOf = (result: Either.Either<TokenPayload, TokenError | TokenExpiredError>) =>
  Either.isLeft(result) ? result.left : undefined

/** Sets the TestClock to `seconds` since the epoch (fractions allowed, in milliseconds). */
const at = (seconds: number) => TestClock.setTime(Math.round(seconds * 1000))

describe("checkClaims", () => {
  it.effect("refuses a token whose identifiers hold a NUL (no store could look it up), whatever else is right", () =>
    Effect.gen(function* () {
      yield* at(IAT)
      for (const overrides of [{ sub: "user\u00001" }, { jti: "\u0000" }, { family_id: "family\u0000" }]) {
        expect(failureOf(yield* check(payload(overrides)))).toBeInstanceOf(TokenError)
      }
      const oauth = payload({ type: "oauth_link_state", family_id: null, link_user_id: "user\u00001" })
      expect(failureOf(yield* check(oauth, { purpose: "oauth_link_state" }))).toBeInstanceOf(TokenError)
      expect(Either.isRight(yield* check(payload()))).toBe(true)
    })
  )

  it.effect("refuses an access or refresh token that belongs to no session; other purposes need none", () =>
    Effect.gen(function* () {
      yield* at(IAT)
      for (const purpose of ["access", "refresh"] as const) {
        const result = yield* check(payload({ type: purpose, family_id: null }), { purpose })
        expect(failureOf(result)).toBeInstanceOf(TokenError)
      }
      const verify = yield* check(payload({ type: "verify_email", family_id: null }), { purpose: "verify_email" })
      expect(Either.isRight(verify)).toBe(true)
    })
  )

  it.effect("accepts a token of the right purpose, issuer and time, answering its payload", () =>
    Effect.gen(function* () {
      yield* at(IAT + 1)
      const claims = payload({ roles: ["admin"], family_id: "family-1" })
      expect(Either.getOrThrow(yield* check(claims))).toEqual(claims)
    })
  )

  it.effect("refuses a token of another purpose, naming the purpose it expected", () =>
    Effect.gen(function* () {
      yield* at(IAT + 1)
      const asRefresh = failureOf(yield* check(payload({ type: "access" }), { purpose: "refresh" }))
      expect(asRefresh).toBeInstanceOf(TokenError)
      expect((asRefresh as TokenError).message).toContain("refresh")

      const asReset = failureOf(yield* check(payload({ type: "verify_email" }), { purpose: "password_reset" }))
      expect(asReset).toBeInstanceOf(TokenError)
      expect((asReset as TokenError).message).toContain("password_reset")
      expect((asReset as TokenError).message).not.toContain("verify_email")
    })
  )

  it.effect("refuses a token from another issuer", () =>
    Effect.gen(function* () {
      yield* at(IAT + 1)
      expect(failureOf(yield* check(payload({ iss: "someone-else" })))).toBeInstanceOf(TokenError)
      expect(failureOf(yield* check(payload(), { issuer: "another-deployment" }))).toBeInstanceOf(TokenError)
    })
  )

  describe("audience", () => {
    const audience = Option.some("portcullis-api")

    it.effect("refuses a token without an audience or for another one when an audience is expected", () =>
      Effect.gen(function* () {
        yield* at(IAT + 1)
        expect(failureOf(yield* check(payload(), { audience }))).toBeInstanceOf(TokenError)
        expect(failureOf(yield* check(payload({ aud: "other-api" }), { audience }))).toBeInstanceOf(TokenError)
        expect(failureOf(yield* check(payload({ aud: ["a", "b"] }), { audience }))).toBeInstanceOf(TokenError)
        expect(failureOf(yield* check(payload({ aud: [] }), { audience }))).toBeInstanceOf(TokenError)
      })
    )

    it.effect("accepts the expected audience as a string or within an array", () =>
      Effect.gen(function* () {
        yield* at(IAT + 1)
        expect(Either.isRight(yield* check(payload({ aud: "portcullis-api" }), { audience }))).toBe(true)
        expect(Either.isRight(yield* check(payload({ aud: ["other", "portcullis-api"] }), { audience }))).toBe(true)
      })
    )

    it.effect("ignores the audience when none is expected", () =>
      Effect.gen(function* () {
        yield* at(IAT + 1)
        expect(Either.isRight(yield* check(payload({ aud: "other-api" })))).toBe(true)
        expect(Either.isRight(yield* check(payload()))).toBe(true)
      })
    )
  })

  describe("issued-at", () => {
    it.effect("refuses a token issued further in the future than the leeway", () =>
      Effect.gen(function* () {
        yield* at(IAT - 31)
        expect(failureOf(yield* check(payload()))).toBeInstanceOf(TokenError)
        yield* at(IAT - 1)
        expect(failureOf(yield* check(payload(), { leewaySeconds: 0 }))).toBeInstanceOf(TokenError)
      })
    )

    it.effect("accepts a token issued in the future within the leeway", () =>
      Effect.gen(function* () {
        yield* at(IAT - 30)
        expect(Either.isRight(yield* check(payload()))).toBe(true)
        yield* at(IAT - 1)
        expect(Either.isRight(yield* check(payload()))).toBe(true)
        yield* at(IAT)
        expect(Either.isRight(yield* check(payload(), { leewaySeconds: 0 }))).toBe(true)
      })
    )
  })

  describe("expiry", () => {
    it.effect("with a 30 s leeway: valid at exp + 29.999 s, expired from exp + 30 s", () =>
      Effect.gen(function* () {
        yield* at(EXP)
        expect(Either.isRight(yield* check(payload()))).toBe(true)
        yield* at(EXP + 29.999)
        expect(Either.isRight(yield* check(payload()))).toBe(true)
        yield* TestClock.adjust(Duration.millis(1))
        expect(failureOf(yield* check(payload()))).toBeInstanceOf(TokenExpiredError)
        yield* TestClock.adjust("1 hour")
        expect(failureOf(yield* check(payload()))).toBeInstanceOf(TokenExpiredError)
      })
    )

    it.effect("OAuth states have an exact lifetime: valid 1 ms before exp, expired at exp, whatever the leeway", () =>
      Effect.gen(function* () {
        for (const purpose of ["oauth_state", "oauth_link_state"] as const) {
          const state = payload({ type: purpose, family_id: null })
          yield* at(EXP - 1)
          expect(Either.isRight(yield* check(state, { purpose })), purpose).toBe(true)
          yield* at(EXP - 0.001)
          expect(Either.isRight(yield* check(state, { purpose })), purpose).toBe(true)
          yield* TestClock.adjust(Duration.millis(1))
          expect(failureOf(yield* check(state, { purpose })), purpose).toBeInstanceOf(TokenExpiredError)
          yield* at(EXP + 1)
          expect(failureOf(yield* check(state, { purpose })), purpose).toBeInstanceOf(TokenExpiredError)
        }
        // The leeway still forgives the other purposes' expiry, and a state's issue in the future.
        for (const purpose of ["access", "refresh", "verify_email", "password_reset"] as const) {
          expect(Either.isRight(yield* check(payload({ type: purpose }), { purpose })), purpose).toBe(true)
        }
        yield* at(IAT - 29)
        expect(Either.isRight(yield* check(payload({ type: "oauth_state" }), { purpose: "oauth_state" }))).toBe(true)
      })
    )

    it.effect("with no leeway: valid 1 ms before exp, expired at exp", () =>
      Effect.gen(function* () {
        yield* at(EXP - 0.001)
        expect(Either.isRight(yield* check(payload(), { leewaySeconds: 0 }))).toBe(true)
        yield* TestClock.adjust(Duration.millis(1))
        expect(failureOf(yield* check(payload(), { leewaySeconds: 0 }))).toBeInstanceOf(TokenExpiredError)
      })
    )
  })
})

describe("tokenWindow", () => {
  it.effect("issues at the current second, dropping milliseconds, and expires ttl seconds later", () =>
    Effect.gen(function* () {
      yield* TestClock.setTime(1_234_567_999)
      expect(tokenWindow(yield* DateTime.now, Duration.minutes(15))).toEqual({ iat: 1_234_567, exp: 1_234_567 + 900 })
      yield* TestClock.adjust(Duration.millis(1))
      expect(tokenWindow(yield* DateTime.now, Duration.seconds(60))).toEqual({ iat: 1_234_568, exp: 1_234_628 })
    })
  )

  it.effect("starts at the epoch with the TestClock untouched", () =>
    Effect.gen(function* () {
      expect(tokenWindow(yield* DateTime.now, Duration.days(7))).toEqual({ iat: 0, exp: 7 * 24 * 60 * 60 })
    })
  )

  it.effect("produces a window that checkClaims accepts until exactly its end (no leeway)", () =>
    Effect.gen(function* () {
      yield* at(IAT + 0.75)
      const window = tokenWindow(yield* DateTime.now, Duration.seconds(TTL))
      const claims = payload(window)
      expect(Either.isRight(yield* check(claims, { leewaySeconds: 0 }))).toBe(true)
      yield* at(window.exp - 0.001)
      expect(Either.isRight(yield* check(claims, { leewaySeconds: 0 }))).toBe(true)
      yield* at(window.exp)
      expect(failureOf(yield* check(claims, { leewaySeconds: 0 }))).toBeInstanceOf(TokenExpiredError)
    })
  )
})
