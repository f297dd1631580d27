import { DateTime, Schema } from "effect"
import { exampleOf } from "./examples.js"
import { hasControlCharacter } from "./Text.js"

/** A user's identifier. UUID v7 by default; the repository chooses the form (USER_ID_TYPE). */
export const UserId = Schema.String.pipe(Schema.nonEmptyString(), Schema.brand("UserId"))
export type UserId = typeof UserId.Type

/** How a deployment's user ids look (USER_ID_TYPE). */
export type UserIdType = "uuid" | "integer" | "string"

/** An integer id as the store keeps it: canonical decimal text of a safe positive integer. */
export const isIntegerUserId = (id: string): boolean =>
  /^[1-9][0-9]{0,15}$/.test(id) && Number.isSafeInteger(Number(id))

/**
 * A user id in the user object: a JSON number for integer ids (USER_ID_TYPE=integer), else a
 * string. The form follows the id itself, which the store makes: UUIDs have hyphens and string
 * ids always hold a letter, so only integer deployments ever answer numbers. Token `sub` claims
 * stay strings.
 */
export const UserIdJson = Schema.transform(Schema.Union(Schema.Int, Schema.String), UserId, {
  strict: true,
  decode: (wire) => String(wire),
  encode: (id) => (isIntegerUserId(id) ? Number(id) : id)
}).annotations({
  jsonSchema: {
    description: "The user's id: a UUID by default, an integer or a random string by USER_ID_TYPE.",
    anyOf: [{ type: "string" }, { type: "integer", minimum: 1 }]
  }
})

/**
 * An email address as it is compared: trimmed, Unicode-normalised (NFC), and its ASCII letters
 * lower-cased. Only ASCII: Unicode case mapping makes distinct characters equal (U+0130 LATIN
 * CAPITAL LETTER I WITH DOT ABOVE lower-cases to `i` and a combining dot), and an address that a
 * provider vouches for must reach the account of that very address, no other. Addresses stored
 * before (lower-cased with Unicode rules) hold no ASCII capital, so they normalise to themselves
 * and keep matching as typed.
 */
export const normaliseEmail = (value: string) =>
  value
    .trim()
    .normalize("NFC")
    .replace(/[A-Z]/g, (letter) => letter.toLowerCase())

const asciiCount = (value: string) => {
  let count = 0
  for (const char of value) if (char.charCodeAt(0) < 0x80) count++
  return count
}

/**
 * Whether normalisation turns a character that is not ASCII into one that is: U+212A KELVIN
 * SIGN is `K` once in NFC. Such an address is refused, so that nobody's address can be spelled
 * with a look-alike that becomes it: a provider vouching for `\u212Aate@example.com` vouches for
 * no account of `kate@example.com`.
 */
export const becomesAscii = (value: string): boolean => asciiCount(value.normalize("NFC")) > asciiCount(value)

/**
 * One plain address, `local@domain` with a dot in the domain: no display name, no quotes,
 * commas, angle brackets, brackets, parentheses, semicolons, colons, backslashes or spaces, so
 * that nothing downstream (a mailer, a store) can read it as another address or as several.
 */
const plainAddress = /^[^\s@"(),:;<>[\]\\]+@[^\s@"(),:;<>[\]\\.]+(\.[^\s@"(),:;<>[\]\\.]+)+$/

/**
 * An email address as the service stores and compares it: normalised (normaliseEmail), so that
 * `Alice@Example.com `, `alice@example.com` and its composed or decomposed Unicode spellings
 * are one account.
 */
export const Email = Schema.String.pipe(
  Schema.filter((given) => !becomesAscii(given), {
    message: () => "must not spell ASCII letters with other characters (such as U+212A KELVIN SIGN)"
  }),
  Schema.compose(
    Schema.transform(Schema.String, Schema.String, { strict: true, decode: normaliseEmail, encode: (email) => email })
  )
)
  .pipe(
    Schema.maxLength(254, { message: () => "an email address has at most 254 characters" }),
    Schema.filter((email) => !hasControlCharacter(email), { message: () => "must not contain control characters" }),
    Schema.pattern(plainAddress, { message: () => "must be one plain email address" }),
    Schema.brand("Email")
  )
  .annotations({ identifier: "Email", jsonSchema: { type: "string", format: "email", maxLength: 254 } })
export type Email = typeof Email.Type

/** A role or permission name: short, printable, no spaces. */
export const RoleName = Schema.String.pipe(Schema.pattern(/^[A-Za-z0-9_.:-]{1,64}$/), Schema.brand("RoleName"))
export type RoleName = typeof RoleName.Type

/** The fields every client may see. Its encoded form is the user object of the API. */
export const publicUserFields = {
  id: UserIdJson,
  email: Email,
  is_active: Schema.Boolean,
  is_verified: Schema.Boolean,
  is_superuser: Schema.Boolean,
  created_at: Schema.DateTimeUtc,
  roles: Schema.Array(Schema.String)
}

/** A deployment's custom field values as stored and shown: JSON, keyed by field name. */
export const CustomFieldValues = Schema.Record({ key: Schema.String, value: Schema.Unknown })
export type CustomFieldValues = typeof CustomFieldValues.Type

/**
 * The user object of the API: never carries the password hash. A deployment's custom fields
 * sit next to the built-in ones, in their JSON form.
 */
export const PublicUser = Schema.Struct(publicUserFields, CustomFieldValues).annotations({
  identifier: "User",
  examples: [
    {
      id: UserId.make("0195a3c2-7b1e-7c3a-9d4f-2a6b8c0e1f37"),
      email: Email.make("ada@example.com"),
      is_active: true,
      is_verified: true,
      is_superuser: false,
      created_at: DateTime.unsafeMake("2025-03-14T09:26:53.000Z"),
      roles: ["editor"]
    }
  ]
})
export type PublicUser = typeof PublicUser.Type

/**
 * The signed-in user as GET /me shows them: the user and the permissions their roles grant now,
 * each once, in name order (the access token's `permissions` are the same at issue time, for
 * information). A superuser passes every permission check whatever this lists.
 */
export const Me = Schema.Struct(
  { ...publicUserFields, permissions: Schema.Array(Schema.String) },
  CustomFieldValues
).annotations({
  identifier: "Me",
  examples: [{ ...exampleOf(PublicUser), permissions: ["articles:publish", "articles:read"] }]
})
export type Me = typeof Me.Type

/** A stored user. `hashed_password` is none for users who signed up through an OAuth provider. */
export class User extends Schema.Class<User>("StoredUser")({
  ...publicUserFields,
  hashed_password: Schema.OptionFromNullOr(Schema.String),
  /**
   * Changes whenever a way in is added or removed, the password set, changed, reset or cleared,
   * the account taken over or deactivated (domain/WaysIn.ts). A sign-in starts its session only
   * if it is still the one read before the credential was checked.
   */
  credential_version: Schema.optionalWith(Schema.Int, { default: () => 0 }),
  /** The deployment's custom fields, in their JSON (encoded) form. */
  fields: Schema.optionalWith(CustomFieldValues, { default: () => ({}) })
}) {}

export const toPublicUser = (user: User): PublicUser => ({
  ...user.fields,
  id: user.id,
  email: user.email,
  is_active: user.is_active,
  is_verified: user.is_verified,
  is_superuser: user.is_superuser,
  created_at: user.created_at,
  roles: user.roles
})

/**
 * A sign-in identifier as it is looked up and counted for lockout: emails normalised like the
 * stored address, other login fields trimmed.
 */
export const normaliseLogin = (field: string, value: string): string =>
  field === "email" ? normaliseEmail(value) : value.trim()

/**
 * The identifier a user signs in with under LOGIN_FIELD, normalised as sign-in normalises it, so
 * that lockout counts the failures of every check of the user's password together.
 */
export const loginIdentifierOf = (user: User, field: string): string =>
  normaliseLogin(field, field === "email" ? user.email : String(user.fields[field] ?? ""))
