import { createPrivateKey, createPublicKey, type JsonWebKey, type KeyObject } from "node:crypto"
import { Either } from "effect"
import { AsymmetricAlgorithm } from "../domain/Jwks.js"

export const asymmetricAlgorithms = AsymmetricAlgorithm.literals

/** A key of an asymmetric JWT algorithm; a signing key is private, a verification key public. */
export interface AlgorithmKey {
  readonly algorithm: AsymmetricAlgorithm
  readonly key: KeyObject
}

/** What each algorithm signs with, as a problem line names it. */
export const keyKinds: Record<AsymmetricAlgorithm, string> = {
  EdDSA: "an Ed25519 key",
  ES256: "a P-256 EC key",
  RS256: "an RSA key of at least 2048 bits"
}

/** The one algorithm a key serves, if any: a key never signs under two algorithms. */
export const algorithmOf = (key: KeyObject): AsymmetricAlgorithm | undefined => {
  const details = key.asymmetricKeyDetails
  switch (key.asymmetricKeyType) {
    case "ed25519":
      return "EdDSA"
    case "ec":
      return details?.namedCurve === "prime256v1" ? "ES256" : undefined
    case "rsa":
      return (details?.modulusLength ?? 0) >= 2048 ? "RS256" : undefined
    default:
      return undefined
  }
}

const describe = (key: KeyObject) => {
  const algorithm = algorithmOf(key)
  if (algorithm !== undefined) return keyKinds[algorithm]
  const details = key.asymmetricKeyDetails
  if (key.asymmetricKeyType === "rsa") return `a ${details?.modulusLength ?? 0}-bit RSA key`
  if (key.asymmetricKeyType === "ec") return `an EC key on ${details?.namedCurve ?? "an unknown curve"}`
  return `a key of type ${key.asymmetricKeyType ?? "unknown"}`
}

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value)

const parseJson = (text: string): unknown => {
  try {
    return JSON.parse(text)
  } catch {
    return undefined
  }
}

/** The key's own algorithm, checked against a JWK's `alg` member when it names one. */
const withAlgorithm = (key: KeyObject, jwk?: Record<string, unknown>): Either.Either<AlgorithmKey, string> => {
  const algorithm = algorithmOf(key)
  if (algorithm === undefined) return Either.left(`holds ${describe(key)}, which no supported algorithm signs with`)
  if (jwk?.alg !== undefined && jwk.alg !== algorithm) {
    return Either.left(`holds a JWK whose alg ${JSON.stringify(jwk.alg)} is not its key's (${algorithm})`)
  }
  return Either.right({ algorithm, key })
}

const attempt = <A>(make: () => A): A | undefined => {
  try {
    return make()
  } catch {
    return undefined
  }
}

/**
 * A signing key for `algorithm` from its text: PEM (PKCS#8, SEC1 or PKCS#1) or a private JWK.
 * Answers the fault in a few words, never the key.
 */
export const readPrivateKey = (text: string, algorithm: AsymmetricAlgorithm): Either.Either<AlgorithmKey, string> => {
  const trimmed = text.trim()
  const json = trimmed.startsWith("{") ? parseJson(trimmed) : undefined
  if (trimmed.startsWith("{") && !isObject(json)) return Either.left("is neither PEM nor a JSON Web Key")
  const input = isObject(json) ? { key: json as JsonWebKey, format: "jwk" as const } : trimmed
  const key = attempt(() => createPrivateKey(input))
  if (key === undefined) {
    return attempt(() => createPublicKey(input)) === undefined
      ? Either.left("is not a readable PEM or JWK private key (an encrypted PEM is not accepted)")
      : Either.left("is a public key, not a private one")
  }
  return Either.flatMap(withAlgorithm(key, isObject(json) ? json : undefined), (found) =>
    found.algorithm === algorithm
      ? Either.right(found)
      : Either.left(`holds ${describe(key)}, not ${keyKinds[algorithm]}`)
  )
}

const pemBlocks = /-----BEGIN ([A-Z0-9 ]+)-----[\s\S]*?-----END \1-----/g

const readPublicKey = (entry: unknown): Either.Either<AlgorithmKey, string> => {
  if (typeof entry === "string") {
    if (/PRIVATE KEY-----/.test(entry)) return Either.left("holds a private key; publish public keys only")
    const key = attempt(() => createPublicKey(entry))
    return key === undefined ? Either.left("holds an unreadable PEM public key") : withAlgorithm(key)
  }
  if (!isObject(entry)) return Either.left("holds an entry that is neither a JWK nor a PEM string")
  if (entry.d !== undefined) return Either.left("holds a private JWK; publish public keys only")
  const key = attempt(() => createPublicKey({ key: entry as JsonWebKey, format: "jwk" }))
  return key === undefined ? Either.left("holds an unreadable JWK") : withAlgorithm(key, entry)
}

/**
 * Earlier public keys, still accepted and published: a JWK Set (`{"keys": [...]}`), a JSON array
 * of JWKs or PEM strings, one JWK, or PEM text of one or more public keys.
 */
export const readPublicKeys = (text: string): Either.Either<ReadonlyArray<AlgorithmKey>, string> => {
  const trimmed = text.trim()
  let entries: ReadonlyArray<unknown>
  if (trimmed.startsWith("{") || trimmed.startsWith("[")) {
    const json = parseJson(trimmed)
    if (json === undefined) return Either.left("is not valid JSON")
    entries = Array.isArray(json) ? json : isObject(json) && Array.isArray(json.keys) ? json.keys : [json]
  } else {
    entries = trimmed.match(pemBlocks) ?? []
    if (entries.length === 0) return Either.left("holds no PEM block")
  }
  return Either.all(entries.map(readPublicKey))
}
