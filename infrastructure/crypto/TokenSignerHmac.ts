import { createHmac, createSecretKey, timingSafeEqual } from "node:crypto"
import { Effect, Layer, type Option, Redacted } from "effect"
import { TokenSigner } from "../../application/ports/TokenSigner.js"
import { remembered } from "../remembered.js"
import { base64url, segments } from "./compactJwt.js"
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
 * SECRET_KEY through node:crypto, and every other token with a key derived from it (tokenKeys.ts).
 * The HMAC is computed on the event loop: it takes a few microseconds, where WebCrypto (jose)
 * costs each sign and verify a round trip through libuv's thread pool and about 40 µs of the
 * event loop's time to set up (BENCHMARKS.md).
 *
 * The access key accepts its own protected headers byte for byte and nothing else: a token
 * cannot choose its algorithm (`none`, another HMAC, a public-key one), add `crit` parameters or
 * a `kid`. The signature is compared in constant time, before the payload is even decoded.
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
        const parts = segments(token)
        const typ = parts === undefined ? undefined : headers.get(parts.header)
        if (parts === undefined || typ === undefined) return undefined
        const known = purpose === "access" ? accessSignatures.get(parts.signingInput) : undefined
        // Compared as text: a signature in any other spelling than the canonical one (padding, stray
        // characters that a lenient decoder would skip) is refused, so each token has one form.
        const expected = known ?? Buffer.from(mac(parts.signingInput).toString("base64url"))
        const signature = Buffer.from(parts.signature)
        const signed = signature.length === expected.length && timingSafeEqual(signature, expected)
        if (signed && known === undefined && purpose === "access") accessSignatures.set(parts.signingInput, expected)
        return signed ? typ : undefined
      }
    }
    return signerOf(access, options.secretKey, options)
  })

export const layer = (options: SignerOptions) => Layer.effect(TokenSigner, make(options))
