import { createHmac, generateKeyPairSync, type KeyObject } from "node:crypto"
import { describe, expect, it } from "@effect/vitest"
import { Context, DateTime, Duration, Effect, Option, Redacted, TestClock } from "effect"
import {
  CompactSign,
  calculateJwkThumbprint,
  createLocalJWKSet,
  decodeProtectedHeader,
  type JWK,
  jwtVerify
} from "jose"
import { PublishedKeys } from "../../application/ports/PublishedKeys.js"
import { TokenSigner } from "../../application/ports/TokenSigner.js"
import { TokenError } from "../../domain/errors.js"
import { type TokenClaims, type TokenPurpose, tokenWindow } from "../../domain/Token.js"
import * as TokenSignerAsymmetric from "../../infrastructure/crypto/TokenSignerAsymmetric.js"
import * as TokenSignerHmac from "../../infrastructure/crypto/TokenSignerHmac.js"
import { purposeKey } from "../../infrastructure/crypto/tokenKeys.js"

/**
 * Which key signs which token (docs/behaviour.md, "Tokens"): access tokens only under the
 * published key, typed `at+jwt`; every other purpose under a key derived from SECRET_KEY for it
 * alone, typed `JWT`; and the tokens of before the separation still accepted for their purpose.
 */

const SECRET = "a-test-secret-key-of-at-least-32-bytes!!"
const secretKey = Redacted.make(SECRET)
const ISSUER = "portcullis-test"
const encoder = new TextEncoder()

const ownPurposes = ["refresh", "verify_email", "password_reset", "oauth_state", "oauth_link_state"] as const
const purposes: ReadonlyArray<TokenPurpose> = ["access", ...ownPurposes]

/** What an app downstream verifies with: the JWKS for an asymmetric algorithm, SECRET_KEY for an HMAC. */
type PublishedKey = Parameters<typeof jwtVerify>[1]

interface Kind {
  readonly signer: TokenSigner["Type"]
  readonly published: PublishedKey
  /** Signs claims as every token was signed before the separation: the published key, `typ: JWT`. */
  readonly oldWay: (claims: object, typ?: string) => Effect.Effect<string>
}

const compact = (claims: object, header: Record<string, unknown>, key: KeyObject | Uint8Array) =>
  Effect.promise(() =>
    new CompactSign(encoder.encode(JSON.stringify({ ...claims, iss: ISSUER })))
      .setProtectedHeader(header as { alg: string })
      .sign(key)
  )

const hmac = (algorithm: TokenSignerHmac.HmacAlgorithm): Effect.Effect<Kind> =>
  Effect.map(
    TokenSignerHmac.make({ algorithm, secretKey, issuer: ISSUER, audience: Option.none(), leewaySeconds: 10 }),
    (signer) => ({
      signer,
      published: encoder.encode(SECRET),
      oldWay: (claims, typ = "JWT") => compact(claims, { alg: algorithm, typ }, encoder.encode(SECRET))
    })
  )

const asymmetric = (algorithm: "EdDSA" | "ES256" | "RS256"): Effect.Effect<Kind> =>
  Effect.gen(function* () {
    const pair =
      algorithm === "EdDSA"
        ? generateKeyPairSync("ed25519")
        : algorithm === "ES256"
          ? generateKeyPairSync("ec", { namedCurve: "P-256" })
          : generateKeyPairSync("rsa", { modulusLength: 2048 })
    const context = yield* TokenSignerAsymmetric.make({
      signingKey: { algorithm, key: pair.privateKey },
      verifyKeys: [],
      secretKey,
      issuer: ISSUER,
      audience: Option.none(),
      leewaySeconds: 10
    })
    const kid = yield* Effect.promise(() =>
      calculateJwkThumbprint(pair.publicKey.export({ format: "jwk" }) as JWK, "sha256")
    )
    return {
      signer: Context.get(context, TokenSigner),
      published: createLocalJWKSet({ keys: [...Context.get(context, PublishedKeys).jwks.keys] as Array<JWK> }),
      oldWay: (claims, typ = "JWT") => compact(claims, { alg: algorithm, typ, kid }, pair.privateKey)
    }
  })

const kinds = {
  HS256: hmac("HS256"),
  HS512: hmac("HS512"),
  EdDSA: asymmetric("EdDSA"),
  ES256: asymmetric("ES256"),
  RS256: asymmetric("RS256")
}

/**
 * Claims of `type` issued now and living a minute. The clock is set to the real time first:
 * jose reads the real one.
 */
const claimsOf = (type: TokenPurpose) =>
  Effect.gen(function* () {
    yield* TestClock.setTime(Date.now())
    return {
      sub: "user-42",
      jti: `jti-${type}`,
      type,
      family_id: "family-42",
      ...tokenWindow(yield* DateTime.now, Duration.seconds(60))
    } satisfies TokenClaims
  })

/** Whether jose accepts the token with the key an app downstream holds; with `typ` when asked. */
const appAccepts = (token: string, key: PublishedKey, options: { readonly typ?: string } = {}) =>
  Effect.promise(() =>
    jwtVerify(token, key as Uint8Array, { issuer: ISSUER, ...options }).then(
      () => true,
      () => false
    )
  )

/** A token of `claims` under one purpose's derived key, with the header the derived keys sign under. */
const underPurposeKey = (keyPurpose: TokenPurpose, claims: object) => {
  const input = `${Buffer.from(JSON.stringify({ alg: "HS256", typ: "JWT" })).toString("base64url")}.${Buffer.from(
    JSON.stringify({ ...claims, iss: ISSUER })
  ).toString("base64url")}`
  return `${input}.${createHmac("sha256", purposeKey(secretKey, keyPurpose)).update(input).digest("base64url")}`
}

const refusal = <A, E>(effect: Effect.Effect<A, E>) => Effect.flip(effect)

for (const [name, make] of Object.entries(kinds)) {
  describe(`JWT_ALGORITHM=${name}`, () => {
    it.effect("an access token is typed at+jwt and verifies with the published key, in the signer and in jose", () =>
      Effect.gen(function* () {
        const { signer, published } = yield* make
        const token = yield* signer.sign(yield* claimsOf("access"))
        expect(decodeProtectedHeader(token)).toMatchObject({ alg: name, typ: "at+jwt" })
        expect(yield* signer.verify(token, "access")).toMatchObject({ type: "access" })
        expect(yield* appAccepts(token, published)).toBe(true)
        expect(yield* appAccepts(token, published, { typ: "at+jwt" })).toBe(true)
      })
    )

    it.effect(
      "refresh, mail and OAuth-state tokens are HS256 typed JWT, and neither the published key nor SECRET_KEY verifies them",
      () =>
        Effect.gen(function* () {
          const { signer, published } = yield* make
          for (const purpose of ownPurposes) {
            const token = yield* signer.sign(yield* claimsOf(purpose))
            expect(decodeProtectedHeader(token), purpose).toEqual({ alg: "HS256", typ: "JWT" })
            expect(yield* signer.verify(token, purpose)).toMatchObject({ type: purpose })
            expect(yield* appAccepts(token, published), purpose).toBe(false)
            expect(yield* appAccepts(token, encoder.encode(SECRET)), purpose).toBe(false)
          }
        })
    )

    it.effect(
      "a token of one purpose is refused for every other, and does not verify under another purpose's key",
      () =>
        Effect.gen(function* () {
          const { signer } = yield* make
          for (const purpose of purposes) {
            const token = yield* signer.sign(yield* claimsOf(purpose))
            for (const other of purposes.filter((each) => each !== purpose)) {
              const refused = yield* refusal(signer.verify(token, other))
              expect(refused, `${purpose} as ${other}`).toBeInstanceOf(TokenError)
              // A genuine token of another purpose is told apart from a forgery, for the client's sake.
              expect(refused.message).toBe(`Expected a token of type ${other}.`)
            }
          }
          // The key alone refuses: claims of one purpose under another purpose's key are not its token.
          for (const purpose of ownPurposes) {
            const claims = yield* claimsOf(purpose)
            expect(yield* signer.verify(underPurposeKey(purpose, claims), purpose)).toMatchObject({ type: purpose })
            for (const other of purposes.filter((each) => each !== purpose)) {
              const refused = yield* refusal(signer.verify(underPurposeKey(other, claims), purpose))
              expect(refused, `${other}'s key`).toBeInstanceOf(TokenError)
              expect(refused.message).toBe("The token is invalid.")
            }
          }
          // A forgery that claims another purpose is only invalid: its claims are not believed.
          const forged = `${(yield* signer.sign(yield* claimsOf("refresh"))).slice(0, -4)}AAAA`
          expect((yield* refusal(signer.verify(forged, "access"))).message).toBe("The token is invalid.")
        })
    )

    it.effect(
      "a token signed before the separation (published key, typ JWT) is accepted for its own purpose only",
      () =>
        Effect.gen(function* () {
          const { signer, oldWay } = yield* make
          for (const purpose of purposes) {
            const token = yield* oldWay(yield* claimsOf(purpose))
            expect(yield* signer.verify(token, purpose), purpose).toMatchObject({
              type: purpose,
              jti: `jti-${purpose}`
            })
            for (const other of purposes.filter((each) => each !== purpose)) {
              expect(yield* refusal(signer.verify(token, other)), `${purpose} as ${other}`).toBeInstanceOf(TokenError)
            }
          }
        })
    )

    it.effect("an at+jwt token under the published key is an access token only, whatever its type claim", () =>
      Effect.gen(function* () {
        const { signer, oldWay } = yield* make
        for (const purpose of ownPurposes) {
          const claims = yield* claimsOf(purpose)
          expect(yield* refusal(signer.verify(yield* oldWay(claims, "at+jwt"), purpose)), purpose).toBeInstanceOf(
            TokenError
          )
          // The same claims under the header of before: the refusal is the header's.
          expect(yield* signer.verify(yield* oldWay(claims), purpose)).toMatchObject({ type: purpose })
        }
      })
    )
  })
}

describe("the keys derived from SECRET_KEY", () => {
  it.effect("follow SECRET_KEY: another secret's refresh token is refused", () =>
    Effect.gen(function* () {
      const options = { algorithm: "HS256" as const, issuer: ISSUER, audience: Option.none(), leewaySeconds: 10 }
      const signer = yield* TokenSignerHmac.make({ ...options, secretKey })
      const other = yield* TokenSignerHmac.make({ ...options, secretKey: Redacted.make(`${SECRET}-rotated`) })
      const token = yield* other.sign(yield* claimsOf("refresh"))
      expect(yield* other.verify(token, "refresh")).toMatchObject({ type: "refresh" })
      expect(yield* refusal(signer.verify(token, "refresh"))).toBeInstanceOf(TokenError)
    })
  )
})
