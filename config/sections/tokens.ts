import { Either, Option, Redacted } from "effect"
import * as F from "../forms.js"
import { PREFIX, type SettingsReader } from "../reader.js"

export const jwtAlgorithms = ["HS256", "HS384", "HS512", "EdDSA", "ES256", "RS256"] as const
export type JwtAlgorithm = (typeof jwtAlgorithms)[number]

const algorithm: F.Form<JwtAlgorithm> = {
  expected: F.oneOf(...jwtAlgorithms).expected,
  read: (raw) => {
    const found = jwtAlgorithms.find((candidate) => candidate.toLowerCase() === raw.trim().toLowerCase())
    return found === undefined ? Either.left("is not a supported algorithm") : Either.right(found)
  }
}

/** The signing keys, the tokens' lifetimes and how ended sessions are revoked. */
export const readTokens = (read: SettingsReader) => {
  /** None: a random key is generated at start-up (tokens then do not survive a restart). */
  const secretKey = read.secret("SECRET_KEY", {
    doc: "The signing secret of the HS algorithms, and the root of the CSRF and sealing keys; at least 32 bytes (`portcullis secret` prints one). Unset: a random key per run, with a warning, so tokens do not survive a restart."
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
    doc: "How tokens are signed: `HS256`, `HS384`, `HS512` with SECRET_KEY; `EdDSA`, `ES256`, `RS256` with JWT_PRIVATE_KEY."
  })
  const jwtPrivateKey = read.secret("JWT_PRIVATE_KEY", { doc: "The private key of an asymmetric JWT_ALGORITHM." })
  const hmac = jwtAlgorithm.startsWith("HS")
  if (hmac ? Option.isSome(jwtPrivateKey) : Option.isNone(jwtPrivateKey)) {
    read.problem(
      hmac
        ? `${PREFIX}JWT_PRIVATE_KEY is set but ${PREFIX}JWT_ALGORITHM=${jwtAlgorithm} signs with SECRET_KEY; expected an EdDSA, ES256 or RS256 algorithm, or no private key`
        : `${PREFIX}JWT_ALGORITHM=${jwtAlgorithm} needs ${PREFIX}JWT_PRIVATE_KEY; expected a PEM private key`
    )
  }
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
    jwtPrivateKey,
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
    emailVerifyExpireMinutes: read.setting("EMAIL_VERIFY_EXPIRE_MINUTES", F.int(1, 525_600), 1440, {
      doc: "The email verification token's lifetime."
    }),
    passwordResetExpireMinutes: read.setting("PASSWORD_RESET_EXPIRE_MINUTES", F.int(1, 1440), 30, {
      doc: "The password reset token's lifetime."
    }),
    blacklistEnabled
  }
}

export type TokenSettings = ReturnType<typeof readTokens>
