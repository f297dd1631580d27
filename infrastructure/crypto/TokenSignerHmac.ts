import { createHmac, createSecretKey, timingSafeEqual } from "node:crypto"
import { DateTime, Effect, Either, Layer, Option, Redacted, Schema } from "effect"
import { TokenSigner } from "../../application/ports/TokenSigner.js"
import { TokenError } from "../../domain/errors.js"
import { checkClaims, TokenPayload } from "../../domain/Token.js"

export type HmacAlgorithm = "HS256" | "HS384" | "HS512"

export interface SignerOptions {
  readonly algorithm: HmacAlgorithm
  readonly secretKey: Redacted.Redacted<string>
  readonly issuer: string
  readonly audience: Option.Option<string>
  readonly leewaySeconds: number
}

const hashOf: Record<HmacAlgorithm, string> = { HS256: "sha256", HS384: "sha384", HS512: "sha512" }
const decodePayload = Schema.decodeUnknownEither(Schema.parseJson(TokenPayload))
const invalid = new TokenError({ message: "The token is invalid." })
const base64url = (text: string) => Buffer.from(text).toString("base64url")

/**
 * JWTs (JWS compact serialization, RFC 7515) signed with an HMAC of SECRET_KEY through
 * node:crypto. The HMAC is computed on the event loop: it takes a few microseconds, where
 * WebCrypto (jose) costs each sign and verify a round trip through libuv's thread pool and about
 * 40 µs of the event loop's time to set up (BENCHMARKS.md).
 *
 * Every token this signer issues carries the same protected header, so verification accepts
 * that header byte for byte and nothing else: a token cannot choose its algorithm (`none`,
 * another HMAC, a public-key one), add `crit` parameters or a `kid`. The signature is compared
 * in constant time, before the payload is even decoded.
 */
export const make = (options: SignerOptions) =>
  Effect.sync(() => {
    const key = createSecretKey(Buffer.from(Redacted.value(options.secretKey)))
    const hash = hashOf[options.algorithm]
    const header = base64url(JSON.stringify({ alg: options.algorithm, typ: "JWT" }))
    const mac = (signingInput: string) => createHmac(hash, key).update(signingInput).digest()
    const stamp = Option.match(options.audience, {
      onNone: () => ({ iss: options.issuer }),
      onSome: (aud) => ({ iss: options.issuer, aud })
    })

    /** The payload of a token whose header is ours and whose signature is right, else nothing. */
    const verifiedPayload = (token: string): string | undefined => {
      const first = token.indexOf(".")
      const second = token.indexOf(".", first + 1)
      if (first < 0 || second < 0 || token.indexOf(".", second + 1) >= 0) return undefined
      if (token.slice(0, first) !== header) return undefined
      // Compared as text: a signature in any other spelling than the canonical one (padding, stray
      // characters that a lenient decoder would skip) is refused, so each token has one form.
      const signature = Buffer.from(token.slice(second + 1))
      const expected = Buffer.from(mac(token.slice(0, second)).toString("base64url"))
      if (signature.length !== expected.length || !timingSafeEqual(signature, expected)) return undefined
      return Buffer.from(token.slice(first + 1, second), "base64url").toString()
    }

    return TokenSigner.of({
      sign: (claims) =>
        Effect.sync(() => {
          const signingInput = `${header}.${base64url(JSON.stringify({ ...claims, ...stamp }))}`
          return `${signingInput}.${mac(signingInput).toString("base64url")}`
        }),
      verify: (token, purpose) =>
        Effect.gen(function* () {
          const text = verifiedPayload(token)
          if (text === undefined) return yield* invalid
          const payload = decodePayload(text)
          if (Either.isLeft(payload)) return yield* invalid
          return yield* checkClaims(payload.right, {
            purpose,
            issuer: options.issuer,
            audience: options.audience,
            now: yield* DateTime.now,
            leewaySeconds: options.leewaySeconds
          })
        })
    })
  })

export const layer = (options: SignerOptions) => Layer.effect(TokenSigner, make(options))
