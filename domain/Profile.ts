import { Either, ParseResult, Schema } from "effect"
import type { FieldProblem } from "./errors.js"

/** Fields PATCH /me can never change, whatever the deployment says. */
export const protectedUserFields: ReadonlyArray<string> = [
  "id",
  "email",
  "hashed_password",
  "is_active",
  "is_verified",
  "is_superuser",
  "roles",
  "password",
  "created_at",
  "refresh_tokens"
]

/** A custom field's schema; its encoded side is JSON. */
// biome-ignore lint/suspicious/noExplicitAny: a field may decode to any type; only its JSON side matters
export type FieldSchema = Schema.Schema<any, any, never>

export interface ProfileRules {
  /** The spec's protected fields plus any the deployment protects. */
  readonly protectedFields: ReadonlySet<string>
  /** The deployment's custom user fields that are not protected; only these may be edited. */
  readonly editableFields: ReadonlySet<string>
  /** Every custom field the deployment declares, with its schema. */
  readonly schemas?: ReadonlyMap<string, FieldSchema>
  /** Custom fields the registration body accepts (the required ones included). */
  readonly registrationFields?: ReadonlySet<string>
  /** Custom fields the registration body must carry. */
  readonly requiredFields?: ReadonlySet<string>
  /** Custom fields no two users may share a value of (the login field, when it is custom). */
  readonly uniqueFields?: ReadonlySet<string>
}

const firstMessage = (error: ParseResult.ParseError): string =>
  ParseResult.ArrayFormatter.formatErrorSync(error)[0]?.message ?? "is not a valid value"

/**
 * Custom field values in their decoded (Type) form turned into their stored JSON form, checked
 * against each field's schema; every field that fails is named. Undeclared names fail too.
 */
export const encodeFieldValues = (
  schemas: ReadonlyMap<string, FieldSchema>,
  values: Readonly<Record<string, unknown>>
): Either.Either<Record<string, unknown>, ReadonlyArray<FieldProblem>> => {
  const encoded: Record<string, unknown> = {}
  const problems: Array<FieldProblem> = []
  for (const [path, value] of Object.entries(values)) {
    const schema = schemas.get(path)
    if (schema === undefined) {
      problems.push({ path, message: "is not a profile field" })
      continue
    }
    Either.match(Schema.encodeUnknownEither(schema)(value), {
      onLeft: (error) => problems.push({ path, message: firstMessage(error) }),
      onRight: (json) => {
        encoded[path] = json
      }
    })
  }
  return problems.length > 0 ? Either.left(problems) : Either.right(encoded)
}

/**
 * Why a profile patch is refused, one entry per offending field; empty when every named field
 * is editable. A patch is all or nothing: one bad field refuses the whole patch.
 */
export const profilePatchProblems = (
  fieldNames: ReadonlyArray<string>,
  rules: ProfileRules
): ReadonlyArray<FieldProblem> =>
  fieldNames.flatMap((path) =>
    rules.protectedFields.has(path)
      ? [{ path, message: "is protected and cannot be changed" }]
      : rules.editableFields.has(path)
        ? []
        : [{ path, message: "is not a profile field" }]
  )

/**
 * A registration's custom fields (decoded) in their stored form, or every problem with them: a
 * name the registration does not accept, a required one missing, a value its schema refuses.
 */
export const registrationFieldValues = (
  rules: ProfileRules,
  values: Readonly<Record<string, unknown>>
): Either.Either<Record<string, unknown>, ReadonlyArray<FieldProblem>> => {
  const accepted = rules.registrationFields ?? new Set<string>()
  const problems: Array<FieldProblem> = Object.keys(values)
    .filter((path) => !accepted.has(path))
    .map((path) => ({ path, message: "is not a registration field" }))
  for (const path of rules.requiredFields ?? []) {
    if (values[path] === undefined) problems.push({ path, message: "is missing" })
  }
  const encoded = encodeFieldValues(rules.schemas ?? new Map(), values)
  if (Either.isLeft(encoded)) problems.push(...encoded.left)
  return problems.length > 0 || Either.isLeft(encoded) ? Either.left(problems) : encoded
}
