import { describe, expect, it } from "@effect/vitest"
import { DateTime, Schema } from "effect"
import { Email, isIntegerUserId, PublicUser, UserId, UserIdJson } from "../../domain/User.js"

describe("the user object's id", () => {
  const encode = Schema.encodeSync(UserIdJson)
  const decode = Schema.decodeUnknownSync(UserIdJson)

  it("is a JSON number for integer ids and a string for every other id", () => {
    expect(encode(UserId.make("1"))).toBe(1)
    expect(encode(UserId.make("9007199254740991"))).toBe(9007199254740991)
    expect(encode(UserId.make("0190f0c2-0000-7000-8000-00000000dead"))).toBe("0190f0c2-0000-7000-8000-00000000dead")
    expect(encode(UserId.make("Ab3_-xYz0123456789abcd"))).toBe("Ab3_-xYz0123456789abcd")
    // Not the store's canonical integers: kept as strings.
    expect(encode(UserId.make("007"))).toBe("007")
    expect(encode(UserId.make("9007199254740993"))).toBe("9007199254740993")
  })

  it("decodes both forms back to the string id", () => {
    expect(decode(42)).toBe("42")
    expect(decode("42")).toBe("42")
    expect(() => decode("")).toThrow()
    expect(() => decode(1.5)).toThrow()
  })

  it("shows in PublicUser's encoded form", () => {
    const user = Schema.encodeSync(PublicUser)({
      id: UserId.make("7"),
      email: Email.make("seven@example.com"),
      is_active: true,
      is_verified: false,
      is_superuser: false,
      created_at: DateTime.unsafeMake(0),
      roles: []
    })
    expect(user.id).toBe(7)
  })

  it("recognises canonical positive integers only", () => {
    expect(["1", "10", "123456789012345"].every(isIntegerUserId)).toBe(true)
    expect(["0", "01", "-1", "1.0", "1e3", "", " 1", "12345678901234567"].some(isIntegerUserId)).toBe(false)
  })
})
