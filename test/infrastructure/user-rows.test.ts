import { describe, expect, it } from "@effect/vitest"
import { Either } from "effect"
import { User } from "../../domain/User.js"
import { remembered } from "../../infrastructure/remembered.js"
import { userOfRow } from "../../infrastructure/sql/userRows.js"

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

describe("userOfRow", () => {
  it("decodes a row into the stored user", () => {
    const user = Either.getOrThrow(userOfRow(row({ roles: '["editor"]', is_verified: 1 })))
    expect(user).toBeInstanceOf(User)
    expect(user).toMatchObject({ email: "ada@example.com", is_active: true, is_verified: true, roles: ["editor"] })
    expect(user.created_at.epochMillis).toBe(1_741_944_413_000)
  })

  it("refuses a row it cannot decode, or that lacks a column", () => {
    expect(Either.isLeft(userOfRow(row({ roles: "not json" })))).toBe(true)
    const { fields: _, ...fewer } = row()
    expect(Either.isLeft(userOfRow(fewer))).toBe(true)
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
