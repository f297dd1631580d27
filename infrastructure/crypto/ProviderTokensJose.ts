import { createPublicKey, type KeyObject } from "node:crypto"
import { Effect, Layer, Option, Schema } from "effect"
import { decodeProtectedHeader, errors, jwtVerify, SignJWT } from "jose"
import { ProviderTokens, type VerifiedAccessToken } from "../../application/ports/ProviderTokens.js"
import { TokenError, TokenExpiredError } from "../../domain/errors.js"

export interface ProviderKey {
  /** An RSA private key of 2048 bits or more: RS256 is what every client takes (OIDC Discovery §3). */
  readonly key: KeyObject
  /** Its RFC 7638 thumbprint, as the JWKS publishes it. */
  readonly kid: string
}

const AT_JWT = "at+jwt"
const refused = new TokenError({ message: "The token is not valid." })

/** What a verified access token must carry to be one of ours (RFC 9068 §2.2). */
const AccessPayload = Schema.Struct({
  iss: Schema.String,
  sub: Schema.String,
  aud: Schema.Union(Schema.String, Schema.Array(Schema.String)),
  client_id: Schema.String,
  scope: Schema.String,
  jti: Schema.String,
  iat: Schema.Number,
  exp: Schema.Number,
  auth_time: Schema.optionalWith(Schema.Number, { exact: true }),
  grant_id: Schema.optionalWith(Schema.String, { exact: true })
})
const decodeAccess = Schema.decodeUnknownOption(AccessPayload)

/** No token of ours holds a NUL in a claim, and no store could look one up (PostgreSQL refuses NUL in text). */
const holdsNul = (claims: VerifiedAccessToken) =>
  [claims.sub, claims.client_id, claims.jti, claims.grant_id].some((id) => id?.includes("\u0000"))

/**
 * The provider's JWTs on `jose`, RS256 under one key. Access tokens are typed `at+jwt` and ID
 * tokens `JWT`, so that one is never taken for the other; both carry `kid`.
 */
export const make = (issuer: string, signing: ProviderKey, now: () => number = Date.now) => {
  const seconds = () => Math.floor(now() / 1000)
  const header = (typ: string) => ({ alg: "RS256", typ, kid: signing.kid })
  const verifyOptions = { issuer, algorithms: ["RS256"] }
  const publicKey = createPublicKey(signing.key)

  return ProviderTokens.of({
    issuer,

    accessToken: ({ aud, ...claims }, ttlSeconds) =>
      Effect.promise(() => {
        const iat = seconds()
        return new SignJWT({ ...claims })
          .setProtectedHeader(header(AT_JWT))
          .setIssuer(issuer)
          .setAudience(typeof aud === "string" ? aud : [...aud])
          .setIssuedAt(iat)
          .setExpirationTime(iat + ttlSeconds)
          .sign(signing.key)
      }),

    idToken: (claims, ttlSeconds) =>
      Effect.promise(() => {
        const iat = seconds()
        return new SignJWT({ ...claims })
          .setProtectedHeader(header("JWT"))
          .setIssuer(issuer)
          .setIssuedAt(iat)
          .setExpirationTime(iat + ttlSeconds)
          .sign(signing.key)
      }),

    verifyAccessToken: (token) =>
      Effect.tryPromise({
        try: async () => {
          const { payload } = await jwtVerify(token, publicKey, {
            ...verifyOptions,
            typ: AT_JWT,
            currentDate: new Date(now())
          })
          const claims: Option.Option<VerifiedAccessToken> = decodeAccess(payload)
          if (Option.isNone(claims) || holdsNul(claims.value)) throw refused
          return claims.value
        },
        catch: (error) => (error instanceof errors.JWTExpired ? new TokenExpiredError() : refused)
      }),

    verifyIdTokenHint: (token) =>
      Effect.tryPromise({
        try: async () => {
          if (decodeProtectedHeader(token).typ === AT_JWT) throw refused
          // Expired hints are taken: the user may come back to sign out long after signing in.
          const { payload } = await jwtVerify(token, publicKey, {
            ...verifyOptions,
            currentDate: new Date(now()),
            clockTolerance: Number.MAX_SAFE_INTEGER
          })
          if (typeof payload.sub !== "string") throw refused
          const aud = payload.aud === undefined ? [] : Array.isArray(payload.aud) ? payload.aud : [payload.aud]
          return { sub: payload.sub, aud }
        },
        catch: () => refused
      })
  })
}

export const layer = (issuer: string, signing: ProviderKey) => Layer.succeed(ProviderTokens, make(issuer, signing))
