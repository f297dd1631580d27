import { Data, DateTime, Option, ParseResult, Schema } from "effect"
import { UserId } from "./User.js"

/** A passkey's own identifier (UUID), the one a user names it by in the API. */
export const PasskeyId = Schema.UUID.pipe(Schema.brand("PasskeyId"))
export type PasskeyId = typeof PasskeyId.Type

/**
 * Bytes as WebAuthn's JSON carries them: base64url without padding. A length of 1 modulo 4 is
 * no whole number of bytes, so it is refused too.
 */
export const Base64Url = Schema.String.pipe(
  Schema.pattern(/^[A-Za-z0-9_-]+$/, { message: () => "must be base64url without padding" }),
  Schema.filter((s) => s.length % 4 !== 1, { message: () => "must be base64url without padding" })
)

/**
 * A WebAuthn credential id, base64url. WebAuthn bounds ids to 1023 bytes (1364 characters), so a
 * longer one is no credential id; no two passkeys of any users share one.
 */
export const CredentialId = Base64Url.pipe(Schema.maxLength(1364), Schema.brand("CredentialId"))
export type CredentialId = typeof CredentialId.Type

/** The 32-bit signature counter an authenticator reports; 0 when it keeps none. */
export const SignCount = Schema.NonNegativeInt.pipe(Schema.lessThanOrEqualTo(0xffff_ffff))

/** A registered passkey as stored. */
export class Passkey extends Schema.Class<Passkey>("StoredPasskey")({
  id: PasskeyId,
  user_id: UserId,
  credential_id: CredentialId,
  /** The credential's public key as a COSE_Key, base64url. */
  public_key: Base64Url,
  sign_count: SignCount,
  /** The transports the browser reported at registration, handed back as hints at sign-in. */
  transports: Schema.Array(Schema.String),
  /** Whether the credential is synced (a multi-device passkey) and backed up. */
  backed_up: Schema.Boolean,
  device_name: Schema.String,
  created_at: Schema.DateTimeUtc,
  last_used_at: Schema.OptionFromNullOr(Schema.DateTimeUtc)
}) {}

/** What a browser is told of a registered credential: excludeCredentials, allowCredentials. */
export type CredentialRef = Pick<Passkey, "credential_id" | "transports">

const WITHOUT_ZONE = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,9})?$/

/**
 * An instant written as ISO 8601 local date-time read as UTC, with milliseconds and no zone
 * designator ("2026-11-23T10:00:00.123"): the passkey list's form, as the spec shows it.
 */
export const DateTimeUtcWithoutZone = Schema.transformOrFail(
  Schema.String.pipe(Schema.pattern(WITHOUT_ZONE)),
  Schema.DateTimeUtcFromSelf,
  {
    strict: true,
    // Date parsing rolls 30 February over into March: only a date-time that reads back the
    // same is one.
    decode: (text, _, ast) => {
      const instant = Option.map(DateTime.make(`${text}Z`), DateTime.toUtc)
      return Option.isSome(instant) && DateTime.formatIso(instant.value).startsWith(text.slice(0, 19))
        ? ParseResult.succeed(instant.value)
        : ParseResult.fail(new ParseResult.Type(ast, text, "not a date-time"))
    },
    encode: (instant) => ParseResult.succeed(DateTime.formatIso(instant).slice(0, -1))
  }
).annotations({
  identifier: "DateTimeUtcWithoutZone",
  jsonSchema: {
    type: "string",
    pattern: WITHOUT_ZONE.source,
    description: "ISO 8601 date-time in UTC without a zone designator, e.g. 2026-11-23T10:00:00.123"
  }
})

/** One passkey as its owner sees it listed: never the key or the counter. */
export const PasskeyInfo = Schema.Struct({
  id: PasskeyId,
  device_name: Schema.String,
  transports: Schema.Array(Schema.String),
  backed_up: Schema.Boolean,
  created_at: DateTimeUtcWithoutZone,
  /** Null while the passkey has never been used to sign in. */
  last_used_at: Schema.NullOr(DateTimeUtcWithoutZone)
}).annotations({
  identifier: "Passkey",
  examples: [
    {
      id: PasskeyId.make("9b2d7c4e-1f3a-4b5c-8d6e-7f8091a2b3c4"),
      device_name: "Work laptop",
      transports: ["internal", "hybrid"],
      backed_up: true,
      created_at: DateTime.unsafeMake("2025-03-14T09:41:07.000Z"),
      last_used_at: DateTime.unsafeMake("2025-03-15T18:02:11.000Z")
    }
  ]
})
export type PasskeyInfo = typeof PasskeyInfo.Type

export const toPasskeyInfo = (passkey: Passkey): PasskeyInfo => ({
  id: passkey.id,
  device_name: passkey.device_name,
  transports: passkey.transports,
  backed_up: passkey.backed_up,
  created_at: passkey.created_at,
  last_used_at: Option.getOrNull(passkey.last_used_at)
})

/** What to do with the sign count an assertion reports. */
export type SignCountDecision = Data.TaggedEnum<{
  /**
   * The counter moved forward: store `reported`, but only if the stored count is still
   * `expected` (a compare-and-swap), so that of assertions racing with one counter value at most
   * one wins; a lost swap means another assertion already used that value: a suspected clone.
   */
  Advance: { readonly expected: number; readonly reported: number }
  /** The authenticator keeps no counter (synced passkeys report 0): no clone check is possible. */
  CounterNotUsed: {}
  /** The counter did not move forward: another copy of the key has signed since. */
  SuspectedClone: { readonly stored: number; readonly reported: number }
}>
export const SignCountDecision = Data.taggedEnum<SignCountDecision>()

/**
 * The sign-count rule of the spec's states table. A reported 0 skips the clone check whatever
 * the stored count: a passkey synced between devices reports 0 on every device, even when an
 * earlier authenticator of it counted.
 */
export const decideSignCount = (stored: number, reported: number): SignCountDecision => {
  if (reported === 0) return SignCountDecision.CounterNotUsed()
  if (reported > stored) return SignCountDecision.Advance({ expected: stored, reported })
  return SignCountDecision.SuspectedClone({ stored, reported })
}

/** The credential id is already registered, to this user or another; it is never moved. */
export class PasskeyCredentialTakenError extends Schema.TaggedError<PasskeyCredentialTakenError>()(
  "PasskeyCredentialTakenError",
  {}
) {}

/** Challenge keys name their ceremony, so a registration challenge never completes a sign-in. */
export const REGISTRATION_CHALLENGE_PREFIX = "passkey:reg:"
export const AUTHENTICATION_CHALLENGE_PREFIX = "passkey:auth:"

/** A challenge key as a client hands it back: the prefix of its ceremony and a random UUID. */
const challengeKey = (prefix: string) =>
  Schema.String.pipe(
    Schema.pattern(new RegExp(`^${prefix}[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$`), {
      message: () => `must be a challenge key starting with ${prefix}`
    })
  )
export const RegistrationChallengeKey = challengeKey(REGISTRATION_CHALLENGE_PREFIX)
export const AuthenticationChallengeKey = challengeKey(AUTHENTICATION_CHALLENGE_PREFIX)

/**
 * What a registration challenge is stored with: the user it was issued to, so that only that
 * user can complete the ceremony with it.
 */
export const RegistrationChallenge = Schema.parseJson(Schema.Struct({ challenge: Schema.String, user_id: UserId }))
