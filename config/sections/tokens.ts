import { readFileSync } from "node:fs"
import { Either, Option, Redacted } from "effect"
import type { AsymmetricAlgorithm } from "../../domain/Jwks.js"
import * as F from "../forms.js"
import { PREFIX, type SettingsReader } from "../reader.js"
import { type AlgorithmKey, asymmetricAlgorithms, keyKinds, readPrivateKey, readPublicKeys } from "../signingKeys.js"

export const jwtAlgorithms = ["HS256", "HS384", "HS512", ...asymmetricAlgorithms] as const
export type JwtAlgorithm = (typeof jwtAlgorithms)[number]

const algorithm: F.Form<JwtAlgorithm> = {
  expected: F.oneOf(...jwtAlgorithms).expected,
  read: (raw) => {
    const found = jwtAlgorithms.find((candidate) => candidate.toLowerCase() === raw.trim().toLowerCase())
    return found === undefined ? Either.left("is not a supported algorithm") : Either.right(found)
  }
}

export const isAsymmetric = (value: JwtAlgorithm): value is AsymmetricAlgorithm =>
  (asymmetricAlgorithms as ReadonlyArray<string>).includes(value)

/** A key's text, and how a problem line names where it came from (a file's path is no secret). */
interface KeyText {
  readonly text: string
  readonly source: string
}

/**
 * The text of `NAME`, or of the file `NAME_FILE` names: one of them, not both. `refused` when
 * what was set cannot be used (the fault is recorded).
 */
export const keyText = (
  read: SettingsReader,
  name: string,
  expected: string,
  doc: string
): KeyText | "unset" | "refused" => {
  const value = read.secret(name, { doc })
  const file = read.optional(`${name}_FILE`, F.text, { doc: `A file holding ${name}, instead of the value.` })
  if (Option.isSome(value) && Option.isSome(file)) {
    read.problem(`${PREFIX}${name} and ${PREFIX}${name}_FILE are both set; expected one of them`)
    return "refused"
  }
  if (Option.isSome(value)) return { text: Redacted.value(value.value), source: `${PREFIX}${name}` }
  if (Option.isNone(file)) return "unset"
  const source = `${PREFIX}${name}_FILE=${JSON.stringify(file.value)}`
  try {
    return { text: readFileSync(file.value, "utf8"), source }
  } catch (error) {
    read.problem(
      `${source} cannot be read (${(error as NodeJS.ErrnoException).code ?? "I/O error"}); expected a readable file holding ${expected}`
    )
    return "refused"
  }
}

const verifyKeysForm = "a JWK Set, a JSON array of public JWKs or PEM strings, or PEM public keys"

/**
 * The signing key of an asymmetric JWT_ALGORITHM (JWT_PRIVATE_KEY) and the earlier public keys
 * still accepted after a rotation (JWT_VERIFY_KEYS), each a value or a file. HMAC algorithms sign
 * with SECRET_KEY and publish nothing, so they take neither.
 */
const readSigningKeys = (read: SettingsReader, jwtAlgorithm: JwtAlgorithm) => {
  const privateForm = isAsymmetric(jwtAlgorithm)
    ? `a PEM or JWK private key, ${keyKinds[jwtAlgorithm]} for ${jwtAlgorithm}`
    : "a PEM or JWK private key"
  const privateText = keyText(
    read,
    "JWT_PRIVATE_KEY",
    privateForm,
    "The signing key of an asymmetric JWT_ALGORITHM: PEM (PKCS#8, SEC1 or PKCS#1, unencrypted) or a private JWK; its `kid` is its RFC 7638 thumbprint (`portcullis keygen` prints one). A key of another type, a public key or an unreadable file stops start-up."
  )
  const verifyText = keyText(
    read,
    "JWT_VERIFY_KEYS",
    verifyKeysForm,
    "Earlier public keys still accepted and published after a rotation: a JWK Set, a JSON array of public JWKs or PEM strings, one JWK, or PEM text of public keys; each verifies only under its own algorithm (a JWK's `alg`, when present, must match it)."
  )
  if (!isAsymmetric(jwtAlgorithm)) {
    for (const [text, name] of [
      [privateText, "JWT_PRIVATE_KEY"],
      [verifyText, "JWT_VERIFY_KEYS"]
    ] as const) {
      if (text !== "unset") {
        read.problem(
          `${PREFIX}${name} is set but ${PREFIX}JWT_ALGORITHM=${jwtAlgorithm} signs with SECRET_KEY; expected an EdDSA, ES256 or RS256 algorithm, or no ${name}`
        )
      }
    }
    return { jwtPrivateKey: Option.none<Redacted.Redacted<AlgorithmKey>>(), jwtVerifyKeys: [] }
  }
  if (privateText === "unset") {
    read.problem(
      `${PREFIX}JWT_ALGORITHM=${jwtAlgorithm} needs ${PREFIX}JWT_PRIVATE_KEY or ${PREFIX}JWT_PRIVATE_KEY_FILE; expected ${privateForm} (\`portcullis keygen --algorithm ${jwtAlgorithm}\` prints one)`
    )
  }
  const jwtPrivateKey =
    typeof privateText === "string"
      ? Option.none()
      : Either.match(readPrivateKey(privateText.text, jwtAlgorithm), {
          onLeft: (fault) => {
            read.problem(`${privateText.source} ${fault}; expected ${privateForm}`)
            return Option.none()
          },
          onRight: (key) => Option.some(Redacted.make(key))
        })
  const jwtVerifyKeys =
    typeof verifyText === "string"
      ? []
      : Either.getOrElse(readPublicKeys(verifyText.text), (fault): ReadonlyArray<AlgorithmKey> => {
          read.problem(`${verifyText.source} ${fault}; expected ${verifyKeysForm}`)
          return []
        })
  return { jwtPrivateKey, jwtVerifyKeys }
}

/** The signing keys, the tokens' lifetimes and how ended sessions are revoked. */
export const readTokens = (read: SettingsReader) => {
  /** None: a random key is generated at start-up (tokens then do not survive a restart). */
  const secretKey = read.secret("SECRET_KEY", {
    doc: "The signing secret of access tokens under the HS algorithms, and the root of the keys of refresh, mail and OAuth-state tokens (under every algorithm), CSRF and sealing; at least 32 bytes (`portcullis secret` prints one). Unset: a random key per run, with a warning, so tokens do not survive a restart."
  })
  if (Option.isSome(secretKey) && Buffer.byteLength(Redacted.value(secretKey.value)) < 32) {
    read.problem(
      `${PREFIX}SECRET_KEY is too short; expected at least 32 bytes (\`portcullis secret\` prints a good one)`
    )
  }
  if (Option.isNone(secretKey)) {
    read.warn(`${PREFIX}SECRET_KEY is not set: a random key is used, so tokens do not survive a restart`)
  }
  const jwtAlgorithm = read.setting("JWT_ALGORITHM", algorithm, "HS256", {
    doc: "How access tokens are signed: `HS256`, `HS384`, `HS512` with SECRET_KEY; `EdDSA` (Ed25519), `ES256` (P-256), `RS256` (RSA, 2048 bits or more) with JWT_PRIVATE_KEY, publishing the public keys at `{auth_prefix}/.well-known/jwks.json`."
  })
  const { jwtPrivateKey, jwtVerifyKeys } = readSigningKeys(read, jwtAlgorithm)
  /** When false, access tokens live until they expire: logout ends only the refresh side. */
  const blacklistEnabled = read.setting("BLACKLIST_ENABLED", F.bool, true, {
    doc: "Access tokens of ended sessions are refused (checked in the database); also makes OAuth states single-use. `false`: they stay valid until they expire, and start-up warns."
  })
  if (!blacklistEnabled) {
    read.warn(`${PREFIX}BLACKLIST_ENABLED=false: logged-out access tokens stay valid until they expire`)
  }
  return {
    secretKey,
    jwtAlgorithm,
    /** The signing key of an asymmetric algorithm; its `kid` is its RFC 7638 thumbprint. */
    jwtPrivateKey,
    /** Earlier public keys, still accepted and published until their tokens expire. */
    jwtVerifyKeys,
    jwtIssuer: read.setting("JWT_ISSUER", F.text, "portcullis", {
      doc: "The `iss` claim, stamped on every token and checked."
    }),
    jwtAudience: read.optional("JWT_AUDIENCE", F.text, { doc: "The `aud` claim, stamped and checked when set." }),
    /** Clock skew tolerated on expiry; revocations outlive tokens by this much. */
    jwtLeewaySeconds: read.setting("JWT_LEEWAY_SECONDS", F.int(0, 300), 30, {
      doc: "Clock skew tolerated on expiry; revocations outlive tokens by this much."
    }),
    accessTokenExpireMinutes: read.setting("ACCESS_TOKEN_EXPIRE_MINUTES", F.int(1, 1440), 15, {
      doc: "The access token's lifetime."
    }),
    refreshTokenExpireDays: read.setting("REFRESH_TOKEN_EXPIRE_DAYS", F.int(1, 3650), 30, {
      doc: "The refresh token's lifetime, renewed at each rotation."
    }),
    /** Zero is the strict rule: any second presentation of a rotated refresh token is reuse. */
    refreshReuseGraceSeconds: read.setting("REFRESH_REUSE_GRACE_SECONDS", F.int(0, 300), 0, {
      doc: "A window in which a rotated refresh token presented again returns its successor pair instead of counting as reuse (racing tabs, lost responses); 0 is the strict rule."
    }),
    maxSessionsPerUser: read.setting("MAX_SESSIONS_PER_USER", F.int(1, 100_000), 500, {
      doc: "The live sessions (sign-ins) a user may hold; a sign-in past it ends the least recently used one, recorded as `session.evicted`."
    }),
    emailVerifyExpireMinutes: read.setting("EMAIL_VERIFY_EXPIRE_MINUTES", F.int(1, 525_600), 1440, {
      doc: "The email verification token's lifetime."
    }),
    passwordResetExpireMinutes: read.setting("PASSWORD_RESET_EXPIRE_MINUTES", F.int(1, 1440), 30, {
      doc: "The password reset token's lifetime."
    }),
    emailSignInExpireMinutes: read.setting("EMAIL_SIGN_IN_EXPIRE_MINUTES", F.int(1, 1440), 15, {
      doc: "How long a mailed sign-in link and code can be confirmed (EMAIL_SIGN_IN_ENABLED)."
    }),
    emailChangeExpireMinutes: read.setting("EMAIL_CHANGE_EXPIRE_MINUTES", F.int(1, 1440), 60, {
      doc: "How long an address change's links (to the new address and, when verified, the current one) can be used; the change is made once both are."
    }),
    emailChangeUndoDays: read.setting("EMAIL_CHANGE_UNDO_DAYS", F.int(1, 90), 7, {
      doc: "How long the old address can undo an address change made; it stays reserved to its account meanwhile."
    }),
    blacklistEnabled
  }
}

export type TokenSettings = ReturnType<typeof readTokens>
