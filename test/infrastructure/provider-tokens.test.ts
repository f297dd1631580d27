import { generateKeyPairSync } from "node:crypto"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Exit } from "effect"
import { calculateJwkThumbprint, createLocalJWKSet, decodeProtectedHeader, jwtVerify, SignJWT } from "jose"
import * as ProviderTokensJose from "../../infrastructure/crypto/ProviderTokensJose.js"

const issuer = "https://id.example.com"
const { privateKey, publicKey } = generateKeyPairSync("rsa", { modulusLength: 2048 })
const publicJwk = publicKey.export({ format: "jwk" })
const kid = await calculateJwkThumbprint(publicJwk as never)
const jwks = createLocalJWKSet({ keys: [{ ...publicJwk, kid, alg: "RS256", use: "sig" }] as never })

const at = (millis: number) => ProviderTokensJose.make(issuer, { key: privateKey, kid }, () => millis)
const NOW = Date.UTC(2026, 11, 1, 12)
const claims = { sub: "u1", aud: "app", client_id: "app", scope: "openid email", jti: "j1", auth_time: 1 }

describe("the provider's JWTs (jose, RS256)", () => {
  it.effect("signs an RFC 9068 access token a client verifies with the published JWKS, and verifies it back", () =>
    Effect.gen(function* () {
      const tokens = at(NOW)
      const token = yield* tokens.accessToken(claims, 300)
      expect(decodeProtectedHeader(token)).toEqual({ alg: "RS256", typ: "at+jwt", kid })
      const { payload } = yield* Effect.promise(() =>
        jwtVerify(token, jwks, { issuer, audience: "app", typ: "at+jwt", currentDate: new Date(NOW) })
      )
      expect(payload).toMatchObject({ ...claims, iss: issuer, iat: NOW / 1000, exp: NOW / 1000 + 300 })
      expect(yield* tokens.verifyAccessToken(token)).toMatchObject({
        sub: "u1",
        client_id: "app",
        scope: "openid email"
      })
    })
  )

  it.effect("refuses an expired access token as expired, an ID token and another issuer's as invalid", () =>
    Effect.gen(function* () {
      const token = yield* at(NOW).accessToken(claims, 300)
      const expired = yield* Effect.exit(at(NOW + 301_000).verifyAccessToken(token))
      expect(Exit.isFailure(expired) && JSON.stringify(expired.cause)).toContain("TokenExpiredError")

      const idToken = yield* at(NOW).idToken({ sub: "u1", aud: "app" }, 300)
      const asAccess = yield* Effect.exit(at(NOW).verifyAccessToken(idToken))
      expect(Exit.isFailure(asAccess) && JSON.stringify(asAccess.cause)).toContain("TokenError")

      const foreign = yield* Effect.promise(() =>
        new SignJWT({ ...claims })
          .setProtectedHeader({ alg: "RS256", typ: "at+jwt", kid })
          .setIssuer("portcullis")
          .setIssuedAt(NOW / 1000)
          .setExpirationTime(NOW / 1000 + 300)
          .sign(privateKey)
      )
      expect(Exit.isFailure(yield* Effect.exit(at(NOW).verifyAccessToken(foreign)))).toBe(true)
    })
  )

  it.effect("refuses an access token whose identifiers hold a NUL, though signed with the key", () =>
    Effect.gen(function* () {
      for (const held of [{ sub: "u\u00001" }, { client_id: "app\u0000" }, { grant_id: "g\u0000" }]) {
        const token = yield* at(NOW).accessToken({ ...claims, ...held }, 300)
        const verified = yield* Effect.exit(at(NOW).verifyAccessToken(token))
        expect(Exit.isFailure(verified) && JSON.stringify(verified.cause)).toContain("TokenError")
      }
    })
  )

  it.effect("takes an expired ID token as a logout hint, but never an access token or a forged one", () =>
    Effect.gen(function* () {
      const idToken = yield* at(NOW).idToken({ sub: "u1", aud: "app", nonce: "n" }, 300)
      expect(decodeProtectedHeader(idToken)).toEqual({ alg: "RS256", typ: "JWT", kid })
      expect(yield* at(NOW + 86_400_000).verifyIdTokenHint(idToken)).toEqual({ sub: "u1", aud: ["app"] })
      const access = yield* at(NOW).accessToken(claims, 300)
      expect(Exit.isFailure(yield* Effect.exit(at(NOW).verifyIdTokenHint(access)))).toBe(true)
      const other = generateKeyPairSync("rsa", { modulusLength: 2048 }).privateKey
      const forged = yield* ProviderTokensJose.make(issuer, { key: other, kid }, () => NOW).idToken({ sub: "u1" }, 300)
      expect(Exit.isFailure(yield* Effect.exit(at(NOW).verifyIdTokenHint(forged)))).toBe(true)
    })
  )
})
