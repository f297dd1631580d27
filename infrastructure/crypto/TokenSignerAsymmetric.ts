import { createPublicKey, generateKeyPairSync, type KeyObject, sign, verify } from "node:crypto"
import { Context, Effect, Layer, type Redacted } from "effect"
import { calculateJwkThumbprint } from "jose"
import { PublishedKeys } from "../../application/ports/PublishedKeys.js"
import { TokenSigner } from "../../application/ports/TokenSigner.js"
import type { AsymmetricAlgorithm, PublicJwk } from "../../domain/Jwks.js"
import { base64url, type ClaimOptions, pinned } from "./compactJwt.js"
import { ACCESS_TYP, type AccessHeaderType, type AccessKeys, accessHeaderTypes, signerOf } from "./tokenKeys.js"

/** A key and the one algorithm it signs with. */
export interface AlgorithmKey {
  readonly algorithm: AsymmetricAlgorithm
  readonly key: KeyObject
}

export interface SignerOptions extends ClaimOptions {
  /** The private key that signs from now on. */
  readonly signingKey: AlgorithmKey
  /** Earlier public keys: their tokens are still accepted until they expire. */
  readonly verifyKeys: ReadonlyArray<AlgorithmKey>
  /** The root of the keys of every token but access tokens (tokenKeys.ts). */
  readonly secretKey: Redacted.Redacted<string>
}

/**
 * How node:crypto signs each algorithm: Ed25519 hashes internally; ES256 as JWS wants it, the
 * raw r‖s (IEEE P1363) rather than DER; RS256 with PKCS#1 v1.5, node's default for RSA keys.
 */
const schemes: Record<AsymmetricAlgorithm, { readonly hash: string | null; readonly dsaEncoding?: "ieee-p1363" }> = {
  EdDSA: { hash: null },
  ES256: { hash: "sha256", dsaEncoding: "ieee-p1363" },
  RS256: { hash: "sha256" }
}

const publicHalf = (key: KeyObject) => (key.type === "private" ? createPublicKey(key) : key)

/** The public JWK of a key, with its RFC 7638 thumbprint as `kid`, its algorithm and `use: "sig"`. */
/** A new private key for `algorithm` (`portcullis keygen`): its PEM (PKCS#8) and its public JWK. */
export const newSigningKey = (algorithm: AsymmetricAlgorithm) => {
  const key =
    algorithm === "EdDSA"
      ? generateKeyPairSync("ed25519").privateKey
      : algorithm === "ES256"
        ? generateKeyPairSync("ec", { namedCurve: "P-256" }).privateKey
        : generateKeyPairSync("rsa", { modulusLength: 2048 }).privateKey
  return Effect.map(publicJwk({ algorithm, key }), (jwk) => ({
    pem: key.export({ format: "pem", type: "pkcs8" }).toString().trim(),
    jwk
  }))
}

export const publicJwk = ({ algorithm, key }: AlgorithmKey): Effect.Effect<PublicJwk> =>
  Effect.promise(async () => {
    const jwk = publicHalf(key).export({ format: "jwk" })
    const kid = await calculateJwkThumbprint(jwk as Parameters<typeof calculateJwkThumbprint>[0], "sha256")
    return { ...(jwk as Omit<PublicJwk, "kid" | "alg" | "use">), kid, alg: algorithm, use: "sig" as const }
  })

/** The exact protected header of a token signed by a key under one `typ`: its algorithm, `typ` and `kid`, nothing else. */
const headerOf = (jwk: PublicJwk, typ: AccessHeaderType) =>
  base64url(JSON.stringify({ alg: jwk.alg, typ, kid: jwk.kid }))

/**
 * JWTs whose access tokens are signed with a private key (EdDSA, ES256, RS256) through
 * node:crypto, on the event loop, as the HMAC signer does and for its reason (compactJwt.ts): a
 * signature check is short enough that a hop to the thread pool would cost more. Every other token is signed with a key
 * derived from SECRET_KEY (tokenKeys.ts), which the JWKS never publishes.
 *
 * Each key has its protected headers, `{alg, typ, kid}`, and verification looks the token's
 * header up byte for byte among them: the header chooses a key only together with that key's
 * own algorithm, so an unknown `kid`, a known `kid` with another `alg` (an HMAC keyed with the
 * public key's bytes, `none`), or any extra parameter finds nothing and is refused before any
 * signature is checked.
 */
export const make = (options: SignerOptions) =>
  Effect.gen(function* () {
    const signingJwk = yield* publicJwk(options.signingKey)
    const published: Array<PublicJwk> = [signingJwk]
    const byHeader = new Map<string, { readonly key: AlgorithmKey; readonly typ: AccessHeaderType }>()
    const add = (jwk: PublicJwk, key: AlgorithmKey) => {
      for (const typ of accessHeaderTypes) byHeader.set(headerOf(jwk, typ), { key, typ })
    }
    add(signingJwk, options.signingKey)
    for (const earlier of options.verifyKeys) {
      const jwk = yield* publicJwk(earlier)
      if (byHeader.has(headerOf(jwk, ACCESS_TYP))) continue
      published.push(jwk)
      add(jwk, { algorithm: earlier.algorithm, key: publicHalf(earlier.key) })
    }

    const header = headerOf(signingJwk, ACCESS_TYP)
    const signer = schemes[options.signingKey.algorithm]
    const signingKey = { key: options.signingKey.key, ...signer }

    const access: AccessKeys = {
      sign: (payload) => {
        const signingInput = `${header}.${base64url(payload)}`
        return `${signingInput}.${sign(signer.hash, Buffer.from(signingInput), signingKey).toString("base64url")}`
      },
      signedUnder: (token) => {
        const pinnedHeader = pinned(byHeader, token)
        if (pinnedHeader === undefined) return undefined
        const { parts, found } = pinnedHeader
        const signature = Buffer.from(parts.signature, "base64url")
        // Only the canonical spelling of a signature is accepted, so each token has one form.
        if (signature.toString("base64url") !== parts.signature) return undefined
        const scheme = schemes[found.key.algorithm]
        const signed = verify(
          scheme.hash,
          Buffer.from(parts.signingInput),
          { key: found.key.key, ...scheme },
          signature
        )
        return signed ? found.typ : undefined
      }
    }

    return Context.make(TokenSigner, signerOf(access, options.secretKey, options)).pipe(
      Context.add(PublishedKeys, PublishedKeys.of({ jwks: { keys: published } }))
    )
  })

export const layer = (options: SignerOptions) => Layer.effectContext(make(options))
