import { createHash, createHmac, randomBytes, timingSafeEqual } from "node:crypto"
import { Effect, Layer, type Redacted } from "effect"
import { CsrfTokens } from "../../application/ports/CsrfTokens.js"
import { deriveKey } from "./CryptographyNode.js"

const NONCE_BYTES = 16

/** Equality that takes the same time wherever two equal-length strings differ. */
const sameText = (a: string, b: string) => {
  const left = Buffer.from(a, "utf8")
  const right = Buffer.from(b, "utf8")
  return left.length === right.length && timingSafeEqual(left, right)
}

/**
 * OWASP's signed double-submit cookie: `<nonce>.<HMAC-SHA256(key, nonce "." SHA-256(refresh token))>`,
 * base64url, under a key of its own derived from SECRET_KEY. The refresh token is hashed first so
 * that the key never touches it directly and the MAC input has a fixed shape.
 */
export const make = (secretKey: Redacted.Redacted<string>) => {
  const key = deriveKey(secretKey, "csrf/v1")
  const mac = (nonce: string, refreshToken: string) =>
    createHmac("sha256", key)
      .update(`${nonce}.${createHash("sha256").update(refreshToken).digest("hex")}`)
      .digest("base64url")
  return CsrfTokens.of({
    issue: (refreshToken) =>
      Effect.sync(() => {
        const nonce = randomBytes(NONCE_BYTES).toString("base64url")
        return `${nonce}.${mac(nonce, refreshToken)}`
      }),
    verify: ({ header, cookie, refreshToken }) => {
      const parts = cookie.split(".")
      const [nonce, signature] = parts
      if (parts.length !== 2 || nonce === undefined || signature === undefined || nonce === "") return false
      // Both checks always run, so the time taken does not tell which one failed.
      const echoed = sameText(header, cookie)
      const signed = sameText(signature, mac(nonce, refreshToken))
      return echoed && signed
    }
  })
}

export const layer = (secretKey: Redacted.Redacted<string>) => Layer.succeed(CsrfTokens, make(secretKey))
