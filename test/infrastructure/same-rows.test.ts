import { Either } from "effect"
import { describe, expect, it } from "vitest"
import { sameRowsSameUsers } from "../../infrastructure/sql/fast/sameRows.js"

/** A users row as SQLite hands it over (roles and fields as JSON text). */
const ids: Record<string, string> = {
  a: "0195a3c2-7b1e-7c3a-9d4f-2a6b8c0e1f3a",
  b: "0195a3c2-7b1e-7c3a-9d4f-2a6b8c0e1f3b",
  c: "0195a3c2-7b1e-7c3a-9d4f-2a6b8c0e1f3c"
}

const row = (name: string, overrides: Record<string, unknown> = {}) => ({
  id: ids[name],
  email: `${name}@example.com`,
  hashed_password: "$argon2id$hash",
  is_active: 1,
  is_verified: 0,
  is_superuser: 0,
  created_at: 2034000000000,
  roles: "[]",
  fields: "{}",
  credential_version: 0,
  ...overrides
})

const user = (read: ReturnType<typeof sameRowsSameUsers>, columns: Record<string, unknown>) =>
  Either.getOrThrow(read(columns))

describe("users decoded once while their row stays the same (the fast reader's)", () => {
  it("answers the very user decoded before for a row equal in every column, and decodes a changed row afresh", () => {
    const read = sameRowsSameUsers()
    const first = user(read, row("a"))
    expect(user(read, row("a"))).toBe(first)
    const changed = user(read, row("a", { roles: '["editor"]' }))
    expect(changed).not.toBe(first)
    expect(changed.roles).toEqual(["editor"])
    expect(user(read, row("a", { credential_version: 1 })).credential_version).toBe(1)
    // A column more is another row.
    const known = user(read, row("a", { credential_version: 1 }))
    expect(user(read, { ...row("a", { credential_version: 1 }), session_live: 1 })).not.toBe(known)
  })

  it("keeps the last `capacity` users only, the oldest forgotten first", () => {
    const read = sameRowsSameUsers(2)
    const a = user(read, row("a"))
    user(read, row("b"))
    user(read, row("c"))
    expect(user(read, row("a"))).not.toBe(a)
  })

  it("refuses a row that does not decode, and remembers nothing of it", () => {
    const read = sameRowsSameUsers()
    expect(Either.isLeft(read(row("a", { roles: "not json" })))).toBe(true)
    expect(Either.isLeft(read(row("a", { roles: "not json" })))).toBe(true)
  })
})
