import { describe, expect, it } from "@effect/vitest"
import { Array as Arr, DateTime, Either, Option, Schema } from "effect"
import {
  byRecentUse,
  FamilyId,
  isAfter,
  isLive,
  listTop,
  positionOf,
  positionOfCursor,
  SessionCursor,
  sessionCursor,
  sessionPage,
  TokenFamily
} from "../../domain/Session.js"
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

const ids = (families: ReadonlyArray<{ readonly family_id: string }>) => families.map((one) => one.family_id)

describe("byRecentUse", () => {
  it("orders most recently used first, then by id descending, so the order never depends on the store", () => {
    const families = [
      family("b", { createdAt: 0, lastUsedAt: 50 }),
      family("old", { lastUsedAt: 10 }),
      family("a", { createdAt: 40, lastUsedAt: 50 }),
      family("newest", { lastUsedAt: 60 })
    ]
    const expected = ["newest", "b", "a", "old"]
    expect(ids(Arr.sort(families, byRecentUse))).toEqual(expected)
    expect(ids(Arr.sort([...families].reverse(), byRecentUse))).toEqual(expected)
  })

  it("isAfter agrees with the order: a family comes after the place of every family before it", () => {
    const sorted = Arr.sort(
      [family("b", { lastUsedAt: 50 }), family("a", { lastUsedAt: 50 }), family("c", { lastUsedAt: 70 })],
      byRecentUse
    )
    for (const [i, one] of sorted.entries()) {
      for (const [j, other] of sorted.entries()) expect(isAfter(other, positionOf(one))).toBe(j > i)
      expect(isAfter(one, listTop)).toBe(true)
    }
  })
})

describe("sessionPage", () => {
  const others = [
    family("newest", { lastUsedAt: 30 }),
    family("middle", { lastUsedAt: 20 }),
    family("old", { lastUsedAt: 10 })
  ]

  it("shows the caller's own session first, then the others, with every field a client sees", () => {
    const page = sessionPage(
      Option.some(family("mine", { lastUsedAt: 1 })),
      others,
      10,
      Option.some(FamilyId.make("mine"))
    )
    expect(ids(page.sessions)).toEqual(["mine", "newest", "middle", "old"])
    expect(page.sessions.map((session) => session.current)).toEqual([true, false, false, false])
    expect(page.sessions[1]).toEqual({
      family_id: "newest",
      ip_address: "203.0.113.7",
      user_agent: "agent-newest",
      created_at: at(0),
      last_used_at: at(30),
      expires_at: at(1_000_000),
      current: false
    })
    expect(page.next).toEqual(Option.none())
  })

  it("announces a next page, after the last one shown, when the others read did not all fit", () => {
    const page = sessionPage(Option.some(family("mine")), others, 3, Option.some(FamilyId.make("mine")))
    expect(ids(page.sessions)).toEqual(["mine", "newest", "middle"])
    expect(page.next).toEqual(Option.some({ last_used_at: START + 20, family_id: "middle" }))
    const later = sessionPage(Option.none(), others, 3, Option.some(FamilyId.make("mine")))
    expect(ids(later.sessions)).toEqual(["newest", "middle", "old"])
    expect(later.next).toEqual(Option.none())
  })

  it("with room for the caller's own session only, the next page starts at the top", () => {
    const page = sessionPage(Option.some(family("mine")), others.slice(0, 1), 1, Option.some(FamilyId.make("mine")))
    expect(ids(page.sessions)).toEqual(["mine"])
    expect(page.next).toEqual(Option.some(listTop))
  })
})

describe("SessionCursor", () => {
  it("round-trips a place and refuses anything else", () => {
    const place = { last_used_at: START, family_id: "0b6c-Family_id" }
    const cursor = sessionCursor(place)
    expect(positionOfCursor(Schema.decodeUnknownSync(SessionCursor)(cursor))).toEqual(place)
    expect(positionOfCursor(Schema.decodeUnknownSync(SessionCursor)(sessionCursor(listTop)))).toEqual(listTop)
    for (const bad of ["", "abc", "1", "-1.a", "1.5.a b", "12345678901234567.a", "1.a/b"]) {
      expect(Either.isLeft(Schema.decodeUnknownEither(SessionCursor)(bad)), bad).toBe(true)
    }
  })
})
