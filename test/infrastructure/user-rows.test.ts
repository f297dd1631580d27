import { describe, expect, it } from "@effect/vitest"
import { Either } from "effect"
import { User } from "../../domain/User.js"
import { remembered } from "../../infrastructure/remembered.js"
import { usersFromRows } from "../../infrastructure/sql/userRows.js"

/** A users row as SQLite answers it: flags as 0/1, the instant in milliseconds, roles and fields as JSON text. */
const row = (overrides: Record<string, unknown> = {}): Record<string, unknown> => ({
  id: "0195a3c2-7b1e-7c3a-9d4f-2a6b8c0e1f37",
  email: "ada@example.com",
  hashed_password: "$argon2id$v=19$m=19456,t=2,p=1$c2FsdHNhbHQ$aGFzaGhhc2g",
  is_active: 1,
  is_verified: 0,
  is_superuser: 0,
  created_at: 1_741_944_413_000,
  credential_version: 0,
  fields: "{}",
  roles: "[]",
  ...overrides
})

const userOf = (decode: ReturnType<typeof usersFromRows>, columns: Record<string, unknown>): User =>
  Either.getOrThrow(decode(columns))

describe("usersFromRows", () => {
  it("decodes a row into the stored user", () => {
    const user = userOf(usersFromRows(), row({ roles: '["editor"]', is_verified: 1 }))
    expect(user).toBeInstanceOf(User)
    expect(user).toMatchObject({ email: "ada@example.com", is_active: true, is_verified: true, roles: ["editor"] })
    expect(user.created_at.epochMillis).toBe(1_741_944_413_000)
  })

  it("answers the same user again for a row read again with the same values, without decoding it again", () => {
    const decode = usersFromRows()
    const first = userOf(decode, row())
    expect(userOf(decode, row())).toBe(first)
  })

  it("decodes afresh a row that changed in any column, so that what the database holds now is what is answered", () => {
    const decode = usersFromRows()
    const before = userOf(decode, row())
    for (const [column, value] of [
      ["is_active", 0],
      ["is_verified", 1],
      ["is_superuser", 1],
      ["roles", '["admin"]'],
      ["fields", '{"nickname":"ada"}'],
      ["hashed_password", null],
      ["email", "lovelace@example.com"],
      ["created_at", 1_741_944_414_000],
      ["credential_version", 1]
    ] as const) {
      const after = userOf(decode, row({ [column]: value }))
      expect(after, column).not.toBe(before)
      expect(userOf(decode, row()), column).not.toBe(after)
    }
    expect(userOf(decode, row({ is_active: 0 })).is_active).toBe(false)
    expect(userOf(decode, row({ roles: '["admin"]' })).roles).toEqual(["admin"])
  })

  it("tells rows of different users apart, and a row with a column more or less from the one kept", () => {
    const decode = usersFromRows()
    const ada = userOf(decode, row())
    const grace = userOf(decode, row({ id: "0195a3c2-7b1e-7c3a-9d4f-2a6b8c0e1f38", email: "grace@example.com" }))
    expect(grace.email).toBe("grace@example.com")
    expect(userOf(decode, row())).toBe(ada)
    const { fields: _, ...fewer } = row()
    expect(Either.isLeft(decode(fewer))).toBe(true)
    expect(userOf(decode, { ...row(), extra: 1 })).not.toBe(ada)
  })

  it("refuses a row it cannot decode, and keeps nothing of it", () => {
    const decode = usersFromRows()
    expect(Either.isLeft(decode(row({ roles: "not json" })))).toBe(true)
    expect(Either.isLeft(decode(row({ roles: "not json" })))).toBe(true)
    expect(userOf(decode, row()).roles).toEqual([])
  })
})

describe("remembered", () => {
  it("keeps the last values set up to its capacity, forgetting the oldest first", () => {
    const kept = remembered<string, number>(3)
    for (const [index, key] of ["a", "b", "c", "d"].entries()) kept.set(key, index)
    expect(["a", "b", "c", "d"].map(kept.get)).toEqual([undefined, 1, 2, 3])
  })

  it("replaces the value of a key it keeps without forgetting another", () => {
    const kept = remembered<string, number>(2)
    kept.set("a", 1)
    kept.set("b", 2)
    kept.set("a", 3)
    expect([kept.get("a"), kept.get("b")]).toEqual([3, 2])
  })
})
