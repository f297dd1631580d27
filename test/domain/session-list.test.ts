import { describe, expect, it } from "@effect/vitest"
import { DateTime, Option } from "effect"
import { FamilyId, isLive, sessionList, TokenFamily } from "../../domain/Session.js"
import { UserId } from "../../domain/User.js"

const START = Date.UTC(2030, 0, 1, 12, 0, 0)
const at = (offsetMillis: number) => DateTime.unsafeMake(START + offsetMillis)

const family = (
  id: string,
  shape: { createdAt?: number; lastUsedAt?: number; expiresAt?: number; revokedAt?: number } = {}
) =>
  new TokenFamily({
    family_id: FamilyId.make(id),
    user_id: UserId.make("user-1"),
    ip_address: "203.0.113.7",
    user_agent: `agent-${id}`,
    created_at: at(shape.createdAt ?? 0),
    last_used_at: at(shape.lastUsedAt ?? shape.createdAt ?? 0),
    expires_at: at(shape.expiresAt ?? 1_000_000),
    revoked_at: Option.map(Option.fromNullable(shape.revokedAt), at)
  })

describe("isLive", () => {
  it("a session is live until it is ended or its expiry is reached", () => {
    expect(isLive(family("a"), at(0))).toBe(true)
    expect(isLive(family("a", { expiresAt: 10 }), at(9))).toBe(true)
    expect(isLive(family("a", { expiresAt: 10 }), at(10))).toBe(false)
    expect(isLive(family("a", { revokedAt: 5 }), at(1))).toBe(false)
  })
})

describe("sessionList", () => {
  it("lists live sessions most recently used first, with every field a client sees", () => {
    const listed = sessionList(
      [family("old", { lastUsedAt: 10 }), family("newest", { lastUsedAt: 30 }), family("middle", { lastUsedAt: 20 })],
      Option.none(),
      at(100)
    )
    expect(listed.map((session) => session.family_id)).toEqual(["newest", "middle", "old"])
    expect(listed[0]).toEqual({
      family_id: "newest",
      ip_address: "203.0.113.7",
      user_agent: "agent-newest",
      created_at: at(0),
      last_used_at: at(30),
      expires_at: at(1_000_000),
      current: false
    })
  })

  it("breaks ties of last use by the newer sign-in, then by id, so the order never depends on the store", () => {
    const families = [
      family("b", { createdAt: 0, lastUsedAt: 50 }),
      family("a", { createdAt: 0, lastUsedAt: 50 }),
      family("newer", { createdAt: 40, lastUsedAt: 50 })
    ]
    const expected = ["newer", "a", "b"]
    expect(sessionList(families, Option.none(), at(100)).map((s) => s.family_id)).toEqual(expected)
    expect(sessionList([...families].reverse(), Option.none(), at(100)).map((s) => s.family_id)).toEqual(expected)
  })

  it("marks only the current family current", () => {
    const listed = sessionList(
      [family("mine", { lastUsedAt: 1 }), family("other", { lastUsedAt: 2 })],
      Option.some(FamilyId.make("mine")),
      at(100)
    )
    expect(listed.map((session) => [session.family_id, session.current])).toEqual([
      ["other", false],
      ["mine", true]
    ])
  })

  it("leaves out ended and expired sessions", () => {
    const listed = sessionList(
      [family("live"), family("ended", { revokedAt: 5 }), family("expired", { expiresAt: 100 })],
      Option.some(FamilyId.make("ended")),
      at(100)
    )
    expect(listed.map((session) => session.family_id)).toEqual(["live"])
  })
})
