import { describe, expect, it } from "@effect/vitest"
import { type ProfileRules, profilePatchProblems, protectedUserFields } from "../../domain/Profile.js"

const PROTECTED = "is protected and cannot be changed"
const UNKNOWN = "is not a profile field"

const rules: ProfileRules = {
  protectedFields: new Set(protectedUserFields),
  editableFields: new Set(["display_name", "bio", "timezone"])
}

describe("protectedUserFields", () => {
  it("holds every field the specification protects", () => {
    expect([...protectedUserFields].sort()).toEqual(
      [
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
      ].sort()
    )
  })
})

describe("profilePatchProblems", () => {
  it.each([...protectedUserFields])("refuses the protected field %s with its own entry", (field) => {
    expect(profilePatchProblems([field], rules)).toEqual([{ path: field, message: PROTECTED }])
  })

  it("refuses a field that is neither protected nor editable", () => {
    expect(profilePatchProblems(["favourite_colour"], rules)).toEqual([{ path: "favourite_colour", message: UNKNOWN }])
  })

  it("accepts editable fields", () => {
    expect(profilePatchProblems(["display_name"], rules)).toEqual([])
    expect(profilePatchProblems(["display_name", "bio", "timezone"], rules)).toEqual([])
  })

  it("accepts the empty patch", () => {
    expect(profilePatchProblems([], rules)).toEqual([])
  })

  it("lists only the offending fields of a mixed patch, in the order given", () => {
    expect(profilePatchProblems(["bio", "is_superuser", "display_name", "nickname", "email"], rules)).toEqual([
      { path: "is_superuser", message: PROTECTED },
      { path: "nickname", message: UNKNOWN },
      { path: "email", message: PROTECTED }
    ])
  })

  it("refuses a protected field even when a deployment also lists it as editable", () => {
    const confused: ProfileRules = {
      protectedFields: new Set([...protectedUserFields, "employee_number"]),
      editableFields: new Set(["email", "employee_number", "bio"])
    }
    expect(profilePatchProblems(["email", "employee_number", "bio"], confused)).toEqual([
      { path: "email", message: PROTECTED },
      { path: "employee_number", message: PROTECTED }
    ])
  })

  it("is case-sensitive: a differently-cased protected name is simply not a profile field", () => {
    expect(profilePatchProblems(["Email"], rules)).toEqual([{ path: "Email", message: UNKNOWN }])
  })
})
