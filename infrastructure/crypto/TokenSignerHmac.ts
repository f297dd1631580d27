import { createHmac, createSecretKey } from "node:crypto"
import { Effect, Layer, type Option, Redacted } from "effect"
import { TokenSigner } from "../../application/ports/TokenSigner.js"
import { remembered } from "../remembered.js"
import { base64url, pinned, sameSignature } from "./compactJwt.js"
import { ACCESS_TYP, type AccessHeaderType, type AccessKeys, accessHeaderTypes, signerOf } from "./tokenKeys.js"

export type HmacAlgorithm = "HS256" | "HS384" | "HS512"

export interface SignerOptions {
  readonly algorithm: HmacAlgorithm
  readonly secretKey: Redacted.Redacted<string>
  readonly issuer: string
  readonly audience: Option.Option<string>
  readonly leewaySeconds: number
}

const hashOf: Record<HmacAlgorithm, string> = { HS256: "sha256", HS384: "sha384", HS512: "sha512" }

/**
 * JWTs (JWS compact serialization, RFC 7515) whose access tokens are signed with an HMAC of
 * SECRET_KEY through node:crypto, and every other token with a key derived from it (tokenKeys.ts),
 * under the rules of compactJwt.ts (pinned headers, one spelling, constant-time comparison).
 *
 * An access token is presented on every call for its life, so the signature its signing input
 * must carry is remembered once it has been seen to carry it (the last 4,096 access tokens): the
 * same comparison in constant time follows, against the same bytes the HMAC would give (a pure
 * function of the input under a key fixed for the signer's life), without computing them again.
 * A forged or unknown input is never remembered; it costs the HMAC, as before.
 */
export const make = (options: SignerOptions) =>
  Effect.sync(() => {
    const key = createSecretKey(Buffer.from(Redacted.value(options.secretKey)))
    const hash = hashOf[options.algorithm]
    const headerOf = (typ: AccessHeaderType) => base64url(JSON.stringify({ alg: options.algorithm, typ }))
    const headers = new Map(accessHeaderTypes.map((typ) => [headerOf(typ), typ]))
    const header = headerOf(ACCESS_TYP)
    const mac = (signingInput: string) => createHmac(hash, key).update(signingInput).digest()
    const accessSignatures = remembered<string, Buffer>(4096)

    const access: AccessKeys = {
      sign: (payload) => {
        const signingInput = `${header}.${base64url(payload)}`
        return `${signingInput}.${mac(signingInput).toString("base64url")}`
      },
      signedUnder: (token, purpose) => {
        const found = pinned(headers, token)
        if (found === undefined) return undefined
        const { signingInput, signature } = found.parts
        const known = purpose === "access" ? accessSignatures.get(signingInput) : undefined
        const expected = known ?? Buffer.from(mac(signingInput).toString("base64url"))
        const signed = sameSignature(expected, signature)
        if (signed && known === undefined && purpose === "access") accessSignatures.set(signingInput, expected)
        return signed ? found.found : undefined
      }
    }
    return signerOf(access, options.secretKey, options)
  })

export const layer = (options: SignerOptions) => Layer.effect(TokenSigner, make(options))
