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

export interface ProfileRules {
  /** The spec's protected fields plus any the deployment protects. */
  readonly protectedFields: ReadonlySet<string>
  /** The deployment's custom user fields; only these may be edited. */
  readonly editableFields: ReadonlySet<string>
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
