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
 * The claims of the access tokens last presented, by their payload's text: a client presents
 * its access token on every call for the token's life, and decoding the claims again each time
 * was a tenth of an authenticated request's CPU. Only the decoding is kept (a pure function of
 * text whose signature was verified first); every presentation is still checked against the
 * clock, the issuer, the audience and the purpose. Refresh and mailed tokens are used once and
 * are not kept.
 */
const accessClaims = remembered<string, TokenPayload>(4096)

const claimsOf = (encoded: string, purpose: TokenPurpose): TokenPayload | undefined => {
  const known = purpose === "access" ? accessClaims.get(encoded) : undefined
  if (known !== undefined) return known
  const payload = decodePayload(Buffer.from(encoded, "base64url").toString())
  if (Either.isLeft(payload)) return undefined
  if (purpose === "access" && payload.right.type === "access") accessClaims.set(encoded, payload.right)
  return payload.right
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
  options: ClaimOptions
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
