import { createHmac, createSecretKey, type KeyObject } from "node:crypto"
import { Effect, type Redacted, Schema } from "effect"
import { TokenSigner } from "../../application/ports/TokenSigner.js"
import { TokenPurpose, wrongPurpose } from "../../domain/Token.js"
import { deriveKey } from "./CryptographyNode.js"
import {
  acceptPayload,
  accessClaims,
  base64url,
  type ClaimOptions,
  invalid,
  pinned,
  sameSignature,
  segments,
  stampOf
} from "./compactJwt.js"

/** The header `typ` of an access token (RFC 9068), which no other token carries. */
export const ACCESS_TYP = "at+jwt"

/**
 * LEGACY, to be removed in a later version (with the `LEGACY_TYP` branch of `isSigned` below):
 * before the keys were separated, every token (access, refresh, mailed, OAuth state) was signed
 * with the published key under `typ: JWT`, its purpose in the `type` claim alone. Such tokens are
 * still accepted for the purpose their `type` claim names (checkClaims) until they expire: at
 * most REFRESH_TOKEN_EXPIRE_DAYS after the upgrade, for a refresh token. Once that time has
 * passed on every deployment, drop this value from `accessHeaderTypes` and its branch.
 */
export const LEGACY_TYP = "JWT"

/** The `typ` of each header the published keys sign under: an access key builds one header for each. */
export const accessHeaderTypes = [ACCESS_TYP, LEGACY_TYP] as const
export type AccessHeaderType = (typeof accessHeaderTypes)[number]

/** The published keys of JWT_ALGORITHM (an HMAC of SECRET_KEY, or a private key and earlier public ones). */
export interface AccessKeys {
  /** An access token for a payload's text: the `at+jwt` header, signed with the signing key. */
  readonly sign: (payload: string) => string
  /** The `typ` of the header under which one of the keys signed the token, or nothing when none did. */
  readonly signedUnder: (token: string, purpose: TokenPurpose) => AccessHeaderType | undefined
}

const isPurpose = Schema.is(TokenPurpose)

/** The purpose a token's claims name, unverified; nothing when it names none. */
const claimedPurpose = (token: string): TokenPurpose | undefined => {
  const parts = segments(token)
  if (parts === undefined) return undefined
  try {
    const claims: unknown = JSON.parse(
      Buffer.from(parts.signingInput.slice(parts.header.length + 1), "base64url").toString()
    )
    const type = typeof claims === "object" && claims !== null ? (claims as { type?: unknown }).type : undefined
    return isPurpose(type) ? type : undefined
  } catch {
    return undefined
  }
}

/** The purposes that only the service itself ever reads: every one but access. */
const ownPurposes = TokenPurpose.literals.filter((purpose) => purpose !== "access")

/** The one header of the tokens signed with a derived key. */
const ownHeader = base64url(JSON.stringify({ alg: "HS256", typ: "JWT" }))
const ownHeaders = new Map([[ownHeader, true]])

/**
 * The key of one purpose's tokens, derived from SECRET_KEY (HKDF-SHA256, the purpose in the
 * info): a token of one purpose does not even verify under another's key, and neither the
 * published key nor SECRET_KEY itself verifies any of them.
 */
export const purposeKey = (secretKey: Redacted.Redacted<string>, purpose: TokenPurpose): KeyObject =>
  createSecretKey(deriveKey(secretKey, `jwt/${purpose}/v1`))

/** The service's own tokens: every purpose but access, each under its own key. */
const ownKeys = (secretKey: Redacted.Redacted<string>) => {
  const keys = new Map<TokenPurpose, KeyObject>(ownPurposes.map((purpose) => [purpose, purposeKey(secretKey, purpose)]))
  const mac = (key: KeyObject, signingInput: string) => createHmac("sha256", key).update(signingInput).digest()
  return {
    sign: (purpose: TokenPurpose, payload: string) => {
      const key = keys.get(purpose) as KeyObject
      const signingInput = `${ownHeader}.${base64url(payload)}`
      return `${signingInput}.${mac(key, signingInput).toString("base64url")}`
    },
    isSigned: (token: string, purpose: TokenPurpose): boolean => {
      const key = keys.get(purpose)
      const found = pinned(ownHeaders, token)
      if (key === undefined || found === undefined) return false
      return sameSignature(Buffer.from(mac(key, found.parts.signingInput).toString("base64url")), found.parts.signature)
    }
  }
}

/**
 * The token signer of every purpose. Access tokens are signed with the published key under
 * `typ: at+jwt` (RFC 9068), so an app verifying with the JWKS (or SECRET_KEY for an HMAC) sees
 * access tokens only. Every other token is the service's own: HS256 under `typ: JWT`, with the
 * key derived for its purpose. An access token is never accepted for another purpose, nor
 * another purpose's token as an access token.
 */
export const signerOf = (access: AccessKeys, secretKey: Redacted.Redacted<string>, options: ClaimOptions) => {
  const own = ownKeys(secretKey)
  const stamp = stampOf(options)
  const claimsOf = accessClaims()

  const isSigned = (token: string, purpose: TokenPurpose): boolean => {
    if (purpose !== "access" && own.isSigned(token, purpose)) return true
    const typ = access.signedUnder(token, purpose)
    // LEGACY_TYP: a token of before the separation, accepted for the purpose its claims name.
    return typ === ACCESS_TYP ? purpose === "access" : typ === LEGACY_TYP
  }

  /**
   * Whether a refused token is a genuine one of another purpose: signed for the purpose its claims
   * name. Asked of refused tokens only, so that a client that sends its refresh token where its
   * access token belongs is told which one was expected; a forgery is only ever invalid.
   */
  const ofAnotherPurpose = (token: string, purpose: TokenPurpose): boolean => {
    const claimed = claimedPurpose(token)
    return claimed !== undefined && claimed !== purpose && isSigned(token, claimed)
  }

  return TokenSigner.of({
    sign: (claims) =>
      Effect.sync(() => {
        const payload = JSON.stringify({ ...claims, ...stamp })
        return claims.type === "access" ? access.sign(payload) : own.sign(claims.type, payload)
      }),
    verify: (token, purpose) => {
      if (isSigned(token, purpose))
        return acceptPayload(token.slice(0, token.lastIndexOf(".")), purpose, options, claimsOf)
      return ofAnotherPurpose(token, purpose) ? Effect.fail(wrongPurpose(purpose)) : invalid
    }
  })
}
