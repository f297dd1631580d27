import { DateTime, Effect, Either, Layer, Option, Redacted, Schema } from "effect"
import { CompactSign, compactVerify } from "jose"
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

const hashOf: Record<HmacAlgorithm, string> = { HS256: "SHA-256", HS384: "SHA-384", HS512: "SHA-512" }
const decodePayload = Schema.decodeUnknownEither(Schema.parseJson(TokenPayload))
const invalid = new TokenError({ message: "The token is invalid." })
const encoder = new TextEncoder()
const decoder = new TextDecoder()

/**
 * JWTs signed with an HMAC of SECRET_KEY. The key is imported once as a CryptoKey (jose then
 * skips the per-call import), and verification accepts only the configured algorithm, so a
 * token cannot choose how it is checked.
 */
export const make = (options: SignerOptions) =>
  Effect.gen(function* () {
    const key = yield* Effect.promise(() =>
      crypto.subtle.importKey(
        "raw",
        encoder.encode(Redacted.value(options.secretKey)),
        { name: "HMAC", hash: hashOf[options.algorithm] },
        false,
        ["sign", "verify"]
      )
    )
    const header = { alg: options.algorithm, typ: "JWT" }
    const stamp = Option.match(options.audience, {
      onNone: () => ({ iss: options.issuer }),
      onSome: (aud) => ({ iss: options.issuer, aud })
    })

    return TokenSigner.of({
      sign: (claims) =>
        Effect.promise(() =>
          new CompactSign(encoder.encode(JSON.stringify({ ...claims, ...stamp }))).setProtectedHeader(header).sign(key)
        ),
      verify: (token, purpose) =>
        Effect.gen(function* () {
          const verified = yield* Effect.tryPromise({
            try: () => compactVerify(token, key, { algorithms: [options.algorithm] }),
            catch: () => invalid
          })
          const payload = decodePayload(decoder.decode(verified.payload))
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
