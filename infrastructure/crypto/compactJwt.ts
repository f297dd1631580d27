import { timingSafeEqual } from "node:crypto"
import { DateTime, Effect, Either, Option, Schema } from "effect"
import { TokenError, type TokenExpiredError } from "../../domain/errors.js"
import { checkClaims, TokenPayload, type TokenPurpose } from "../../domain/Token.js"
import { remembered } from "../remembered.js"

/** What every signer stamps and checks besides the signature. */
export interface ClaimOptions {
  readonly issuer: string
  readonly audience: Option.Option<string>
  readonly leewaySeconds: number
}

const decodePayload = Schema.decodeUnknownEither(Schema.parseJson(TokenPayload))

/**
 * The rules every signer of this service holds a token to before its claims are read, in this one
 * module (the signers compute signatures with node:crypto, on the event loop, rather than through
 * jose: WebCrypto's round trip through the thread pool is the larger part of an authenticated
 * request; BENCHMARKS.md, "Kept optimisations"):
 *
 * - A key accepts its own protected headers byte for byte and nothing else (`pinned`): a token
 *   cannot choose its algorithm (`none`, another HMAC, a public-key one), name a key or add
 *   `crit` parameters.
 * - A signature has one spelling, the canonical base64url of its bytes: padding or stray
 *   characters that a lenient decoder would skip make it refused, so each token has one form.
 * - An HMAC is compared in constant time (`sameSignature`), before the payload is even decoded.
 */
export const pinned = <T>(headers: ReadonlyMap<string, T>, token: string) => {
  const parts = segments(token)
  const found = parts === undefined ? undefined : headers.get(parts.header)
  return parts === undefined || found === undefined ? undefined : { parts, found }
}

/** Whether a presented signature is `expected` (its canonical text), compared in constant time. */
export const sameSignature = (expected: Buffer, presented: string): boolean => {
  const signature = Buffer.from(presented)
  return signature.length === expected.length && timingSafeEqual(signature, expected)
}

/** How a verified payload's text becomes claims: decoded each time, or remembered (`accessClaims`). */
export type ClaimsOf = (encoded: string, purpose: TokenPurpose) => TokenPayload | undefined

const decodeClaims: ClaimsOf = (encoded) => {
  const payload = decodePayload(Buffer.from(encoded, "base64url").toString())
  return Either.isLeft(payload) ? undefined : payload.right
}

/**
 * The claims of the access tokens a signer last verified, by their payload's text (the last
 * `capacity`): a client presents its access token on every call for the token's life, so its
 * decoding is done once. Only the decoding is kept (a pure function of text whose signature was
 * verified first); every presentation is still checked against the clock, the issuer, the
 * audience and the purpose. Refresh and mailed tokens are used once and are not kept. One for
 * each signer, so that nothing is shared between services in one process.
 */
export const accessClaims = (capacity = 4096): ClaimsOf => {
  const known = remembered<string, TokenPayload>(capacity)
  return (encoded, purpose) => {
    const found = purpose === "access" ? known.get(encoded) : undefined
    if (found !== undefined) return found
    const payload = decodeClaims(encoded, purpose)
    if (payload !== undefined && purpose === "access" && payload.type === "access") known.set(encoded, payload)
    return payload
  }
}

/** One refusal for every malformed or wrongly signed token: a forger learns nothing from it. */
export const invalid = new TokenError({ message: "The token is invalid." })

export const base64url = (text: string) => Buffer.from(text).toString("base64url")

/** The issuer and, when configured, the audience, stamped on every token. */
export const stampOf = (options: ClaimOptions) =>
  Option.match(options.audience, {
    onNone: () => ({ iss: options.issuer }),
    onSome: (aud) => ({ iss: options.issuer, aud })
  })

/** The three segments of a compact JWS (RFC 7515), or nothing when it has any other shape. */
export const segments = (
  token: string
): { readonly header: string; readonly signingInput: string; readonly signature: string } | undefined => {
  const first = token.indexOf(".")
  const second = token.indexOf(".", first + 1)
  if (first < 0 || second < 0 || token.indexOf(".", second + 1) >= 0) return undefined
  return { header: token.slice(0, first), signingInput: token.slice(0, second), signature: token.slice(second + 1) }
}

/** The claims of a token whose signature was verified, held to the one rule (domain/Token.ts). */
export const acceptPayload = (
  signingInput: string,
  purpose: TokenPurpose,
  options: ClaimOptions,
  claimsOf: ClaimsOf = decodeClaims
): Effect.Effect<TokenPayload, TokenError | TokenExpiredError> => {
  const payload = claimsOf(signingInput.slice(signingInput.indexOf(".") + 1), purpose)
  if (payload === undefined) return invalid
  return Effect.flatMap(DateTime.now, (now) =>
    checkClaims(payload, {
      purpose,
      issuer: options.issuer,
      audience: options.audience,
      now,
      leewaySeconds: options.leewaySeconds
    })
  )
}
