import {
  createCipheriv,
  createDecipheriv,
  createHash,
  createHmac,
  hkdfSync,
  randomBytes,
  randomInt,
  randomUUID
} from "node:crypto"
import { Effect, Layer, Option, Redacted } from "effect"
import { Cryptography } from "../../application/ports/Cryptography.js"

/** A key for one use, derived from SECRET_KEY, so that no two uses share key material. */
export const deriveKey = (secretKey: Redacted.Redacted<string>, use: string): Buffer =>
  Buffer.from(hkdfSync("sha256", Redacted.value(secretKey), "portcullis", use, 32))

const SEAL_VERSION = "v1"
const TAG_LENGTH = 16

export const make = (secretKey: Redacted.Redacted<string>) => {
  const sealKey = deriveKey(secretKey, "seal/v1")
  const macKeys = new Map<string, Buffer>()
  const macKey = (use: string) => {
    const known = macKeys.get(use)
    if (known !== undefined) return known
    const key = deriveKey(secretKey, `mac/${use}`)
    macKeys.set(use, key)
    return key
  }
  return Cryptography.of({
    digest: (token) => createHash("sha256").update(token).digest("hex"),
    s256: (verifier) => createHash("sha256").update(verifier).digest("base64url"),
    randomId: Effect.sync(() => randomUUID()),
    randomSecret: Effect.sync(() => randomBytes(32).toString("base64url")),
    randomDigits: (length) => Effect.sync(() => Array.from({ length }, () => String(randomInt(10))).join("")),
    mac: (use, message) => createHmac("sha256", macKey(use)).update(message).digest("base64url"),
    seal: (plaintext) =>
      Effect.sync(() => {
        const iv = randomBytes(12)
        const cipher = createCipheriv("aes-256-gcm", sealKey, iv)
        const body = Buffer.concat([cipher.update(plaintext, "utf8"), cipher.final(), cipher.getAuthTag()])
        return `${SEAL_VERSION}.${iv.toString("base64url")}.${body.toString("base64url")}`
      }),
    open: (sealed) => {
      const parts = sealed.split(".")
      const [version, iv, body] = parts
      if (parts.length !== 3 || version !== SEAL_VERSION || iv === undefined || body === undefined) return Option.none()
      try {
        const bytes = Buffer.from(body, "base64url")
        if (bytes.length < TAG_LENGTH) return Option.none()
        const decipher = createDecipheriv("aes-256-gcm", sealKey, Buffer.from(iv, "base64url"), {
          authTagLength: TAG_LENGTH
        })
        decipher.setAuthTag(bytes.subarray(bytes.length - TAG_LENGTH))
        const plain = Buffer.concat([decipher.update(bytes.subarray(0, bytes.length - TAG_LENGTH)), decipher.final()])
        return Option.some(plain.toString("utf8"))
      } catch {
        return Option.none()
      }
    }
  })
}

export const layer = (secretKey: Redacted.Redacted<string>) => Layer.succeed(Cryptography, make(secretKey))
