import { createHmac, createPublicKey, generateKeyPairSync, type KeyObject } from "node:crypto"
import { describe, expect, it } from "@effect/vitest"
import { Context, DateTime, Duration, Effect, Option, Redacted, TestClock } from "effect"
import { calculateJwkThumbprint, createLocalJWKSet, type JWK, jwtVerify, SignJWT } from "jose"
import { PublishedKeys } from "../../application/ports/PublishedKeys.js"
import { TokenSigner } from "../../application/ports/TokenSigner.js"
import { TokenError } from "../../domain/errors.js"
import type { AsymmetricAlgorithm } from "../../domain/Jwks.js"
import { type TokenClaims, tokenWindow } from "../../domain/Token.js"
import * as TokenSignerAsymmetric from "../../infrastructure/crypto/TokenSignerAsymmetric.js"

const ISSUER = "portcullis-test"
const SECRET = "a-test-secret-key-of-at-least-32-bytes!!"
const START = Date.UTC(2031, 4, 6, 7, 8, 9, 500)

const keyPair = (algorithm: AsymmetricAlgorithm): TokenSignerAsymmetric.AlgorithmKey => {
  const pair =
    algorithm === "EdDSA"
      ? generateKeyPairSync("ed25519")
      : algorithm === "ES256"
        ? generateKeyPairSync("ec", { namedCurve: "P-256" })
        : generateKeyPairSync("rsa", { modulusLength: 2048 })
  return { algorithm, key: pair.privateKey }
}
const publicOf = (pair: TokenSignerAsymmetric.AlgorithmKey) => ({ ...pair, key: createPublicKey(pair.key) })

/** A signer, and the JWK Set it publishes. */
const signerOf = (signingKey: TokenSignerAsymmetric.AlgorithmKey, verifyKeys: ReadonlyArray<KeyPair> = []) =>
  Effect.map(
    TokenSignerAsymmetric.make({
      signingKey,
      verifyKeys: verifyKeys.map(publicOf),
      secretKey: Redacted.make(SECRET),
      issuer: ISSUER,
      audience: Option.none(),
      leewaySeconds: 10
    }),
    (context) => ({ signer: Context.get(context, TokenSigner), jwks: Context.get(context, PublishedKeys).jwks })
  )
type KeyPair = TokenSignerAsymmetric.AlgorithmKey

const claimsNow = Effect.map(
  DateTime.now,
  (now): TokenClaims => ({
    sub: "user-42",
    jti: "jti-42",
    type: "access",
    family_id: "family-42",
    ...tokenWindow(now, Duration.seconds(60))
  })
)

const base64url = (value: unknown) => Buffer.from(JSON.stringify(value)).toString("base64url")
const headerOf = (token: string): Record<string, unknown> =>
  JSON.parse(Buffer.from(token.split(".")[0] ?? "", "base64url").toString())
const thumbprint = (key: KeyObject) =>
  Effect.promise(() => calculateJwkThumbprint(createPublicKey(key).export({ format: "jwk" }) as JWK))
const refusal = <A, E>(effect: Effect.Effect<A, E>) => Effect.flip(effect)

/** jose's verification of a token against a published JWK Set: the oracle. */
const joseVerifies = (token: string, jwks: { keys: ReadonlyArray<object> }) =>
  Effect.promise(() =>
    jwtVerify(token, createLocalJWKSet({ keys: [...jwks.keys] as Array<JWK> }), { issuer: ISSUER }).then(
      (result) => result.payload,
      () => undefined
    )
  )

describe("TokenSignerAsymmetric", () => {
  for (const algorithm of ["EdDSA", "ES256", "RS256"] as const) {
    it.effect(
      `${algorithm}: signs with kid = RFC 7638 thumbprint, verifies its own tokens, interoperates with jose`,
      () =>
        Effect.gen(function* () {
          yield* TestClock.setTime(START)
          const pair = keyPair(algorithm)
          const { signer, jwks } = yield* signerOf(pair)
          const kid = yield* thumbprint(pair.key)
          const token = yield* signer.sign(yield* claimsNow)
          expect(headerOf(token)).toEqual({ alg: algorithm, typ: "at+jwt", kid })
          expect(yield* signer.verify(token, "access")).toMatchObject({ sub: "user-42", iss: ISSUER })

          expect(jwks.keys).toHaveLength(1)
          expect(jwks.keys[0]).toMatchObject({ kid, alg: algorithm, use: "sig" })
          expect(jwks.keys[0]).not.toHaveProperty("d")

          // Our token through jose and our JWKS: jose reads the real clock, so it is issued now.
          const fresh = yield* signer.sign({
            ...(yield* claimsNow),
            ...tokenWindow(DateTime.unsafeNow(), Duration.seconds(60))
          })
          expect(yield* joseVerifies(fresh, jwks)).toMatchObject({ sub: "user-42" })

          // jose's token, with our key and kid, through our verification.
          const byJose = yield* Effect.promise(() =>
            new SignJWT({ ...{ jti: "jti-7", type: "access", family_id: "family-7" }, iss: ISSUER })
              .setProtectedHeader({ alg: algorithm, typ: "at+jwt", kid })
              .setSubject("user-7")
              .setIssuedAt(Math.floor(START / 1000))
              .setExpirationTime(Math.floor(START / 1000) + 60)
              .sign(pair.key)
          )
          expect(yield* signer.verify(byJose, "access")).toMatchObject({ sub: "user-7", jti: "jti-7" })
          expect(yield* refusal(signer.verify(byJose, "refresh"))).toBeInstanceOf(TokenError)
        })
    )
  }

  it.effect(
    "refuses algorithm confusion: HS256 keyed with the public key, alg none, unknown kid, right kid with another alg",
    () =>
      Effect.gen(function* () {
        yield* TestClock.setTime(START)
        const pair = keyPair("EdDSA")
        const { signer, jwks } = yield* signerOf(pair)
        const kid = yield* thumbprint(pair.key)
        const claims = { ...(yield* claimsNow), iss: ISSUER }
        const payload = base64url(claims)
        const hmacWith = (secret: string | Buffer, header: Record<string, unknown>) => {
          const input = `${base64url(header)}.${payload}`
          return `${input}.${createHmac("sha256", secret).update(input).digest("base64url")}`
        }
        const publicPem = createPublicKey(pair.key).export({ format: "pem", type: "spki" }).toString()
        const publicJwk = jwks.keys[0]
        const forged = [
          hmacWith(publicPem, { alg: "HS256", typ: "at+jwt", kid }),
          hmacWith(publicPem, { alg: "HS256", typ: "JWT", kid }),
          hmacWith(Buffer.from(publicJwk?.x ?? "", "base64url"), { alg: "HS256", typ: "JWT", kid }),
          hmacWith(JSON.stringify(publicJwk), { alg: "HS256", typ: "JWT", kid }),
          `${base64url({ alg: "none", typ: "at+jwt", kid })}.${payload}.`,
          `${base64url({ alg: "none", typ: "JWT", kid })}.${payload}.`,
          `${base64url({ alg: "none" })}.${payload}.`
        ]
        for (const token of forged) {
          expect(yield* refusal(signer.verify(token, "access")), token).toBeInstanceOf(TokenError)
        }
        // The header of the service's own tokens (HS256, no kid), keyed with what the JWKS tells.
        for (const secret of [publicPem, JSON.stringify(publicJwk), Buffer.from(publicJwk?.x ?? "", "base64url")]) {
          const refreshClaims = { ...claims, type: "refresh" }
          const input = `${base64url({ alg: "HS256", typ: "JWT" })}.${base64url(refreshClaims)}`
          const token = `${input}.${createHmac("sha256", secret).update(input).digest("base64url")}`
          expect(yield* refusal(signer.verify(token, "refresh")), token).toBeInstanceOf(TokenError)
        }

        // Another key signs with its own kid: unknown here. Another ES256 key signing under our kid: wrong alg.
        const stranger = keyPair("EdDSA")
        const { signer: strangers } = yield* signerOf(stranger)
        expect(yield* refusal(signer.verify(yield* strangers.sign(yield* claimsNow), "access"))).toBeInstanceOf(
          TokenError
        )
        const ecdsa = keyPair("ES256")
        const underOurKid = yield* Effect.promise(() =>
          new SignJWT(claims).setProtectedHeader({ alg: "ES256", typ: "JWT", kid }).sign(ecdsa.key)
        )
        expect(yield* refusal(signer.verify(underOurKid, "access"))).toBeInstanceOf(TokenError)

        // The right key with a header that is not exactly ours (no kid, reordered, a key URL): refused too.
        for (const header of [
          { alg: "EdDSA", typ: "at+jwt" },
          { alg: "EdDSA", typ: "JWT" },
          { kid, alg: "EdDSA", typ: "at+jwt" },
          { kid, alg: "EdDSA", typ: "JWT" },
          { alg: "EdDSA", typ: "at+JWT", kid },
          { alg: "EdDSA", typ: "at+jwt", kid, jku: "https://attacker.example/jwks.json" },
          { alg: "EdDSA", typ: "JWT", kid, jku: "https://attacker.example/jwks.json" }
        ]) {
          const token = yield* Effect.promise(() => new SignJWT(claims).setProtectedHeader(header).sign(pair.key))
          expect(yield* refusal(signer.verify(token, "access")), JSON.stringify(header)).toBeInstanceOf(TokenError)
        }
        // The refusals are about the header: the genuine token passes.
        expect(yield* signer.verify(yield* signer.sign(yield* claimsNow), "access")).toMatchObject({ sub: "user-42" })
      })
  )

  it.effect("refuses an altered payload and a non-canonical signature", () =>
    Effect.gen(function* () {
      yield* TestClock.setTime(START)
      const { signer } = yield* signerOf(keyPair("ES256"))
      const token = yield* signer.sign(yield* claimsNow)
      const [header, payload, signature] = token.split(".") as [string, string, string]
      const altered = base64url({ ...JSON.parse(Buffer.from(payload, "base64url").toString()), sub: "admin" })
      for (const variant of [`${header}.${altered}.${signature}`, `${token}=`, `${token}.`, `${header}.${payload}.`]) {
        expect(yield* refusal(signer.verify(variant, "access")), variant).toBeInstanceOf(TokenError)
      }
    })
  )

  it.effect("rotation: a new key signs, earlier public keys keep verifying and are published, others do not", () =>
    Effect.gen(function* () {
      yield* TestClock.setTime(START)
      const first = keyPair("RS256")
      const second = keyPair("EdDSA")
      const before = yield* signerOf(first)
      const oldToken = yield* before.signer.sign(yield* claimsNow)

      const after = yield* signerOf(second, [first, second])
      const newToken = yield* after.signer.sign(yield* claimsNow)
      expect(headerOf(newToken)).toMatchObject({ alg: "EdDSA", kid: yield* thumbprint(second.key) })
      expect(yield* after.signer.verify(oldToken, "access")).toMatchObject({ sub: "user-42" })
      expect(yield* after.signer.verify(newToken, "access")).toMatchObject({ sub: "user-42" })
      // The signing key first, each key once.
      expect(after.jwks.keys.map((key) => key.kid)).toEqual([
        yield* thumbprint(second.key),
        yield* thumbprint(first.key)
      ])
      expect(after.jwks.keys.map((key) => key.alg)).toEqual(["EdDSA", "RS256"])

      // Once the earlier key is dropped, its tokens are refused.
      const dropped = yield* signerOf(second)
      expect(yield* refusal(dropped.signer.verify(oldToken, "access"))).toBeInstanceOf(TokenError)
      expect(yield* refusal(before.signer.verify(newToken, "access"))).toBeInstanceOf(TokenError)
    })
  )
})
