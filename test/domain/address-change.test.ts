import { DateTime, Option } from "effect"
import { describe, expect, it } from "vitest"
import {
  awaitedLinks,
  decideLink,
  LinkDecision,
  linkOf,
  type PendingAddressChange,
  undoEviction,
  undoIsLive
} from "../../domain/AddressChange.js"
import { UserId } from "../../domain/User.js"

const at = (iso: string) => DateTime.unsafeMake(iso)
const now = at("2026-12-01T12:00:00Z")

const pending = (changes: Partial<PendingAddressChange> = {}): PendingAddressChange => ({
  user_id: UserId.make("u1"),
  new_email: "new@example.com",
  family_id: "f1",
  credential_version: 3,
  new_token_digest: "new-digest",
  current_token_digest: "current-digest",
  new_confirmed: false,
  current_confirmed: false,
  created_at: at("2026-12-01T11:30:00Z"),
  expires_at: at("2026-12-01T12:30:00Z"),
  ...changes
})

const live = { now, account: Option.some({ is_active: true, credential_version: 3 }), sessionLive: true }

describe("an address change's links", () => {
  it("a verified current address is awaited besides the new one; an unverified one is not", () => {
    expect(awaitedLinks(pending())).toEqual(["new", "current"])
    expect(awaitedLinks(pending({ current_token_digest: null }))).toEqual(["new"])
    expect(awaitedLinks(pending({ new_confirmed: true }))).toEqual(["current"])
    expect(awaitedLinks(pending({ new_confirmed: true, current_confirmed: true }))).toEqual([])
  })

  it("a digest names its link, or neither", () => {
    expect(linkOf(pending(), "new-digest")).toBe("new")
    expect(linkOf(pending(), "current-digest")).toBe("current")
    expect(linkOf(pending(), "other")).toBeNull()
    expect(linkOf(pending({ current_token_digest: null }), "current-digest")).toBeNull()
  })

  it("the first of two links awaits the other, whichever it is", () => {
    expect(decideLink(pending({ new_confirmed: true }), "new", live)).toEqual(
      LinkDecision.Await({ awaiting: "current" })
    )
    expect(decideLink(pending({ current_confirmed: true }), "current", live)).toEqual(
      LinkDecision.Await({ awaiting: "new" })
    )
  })

  it("the last link moves the account; with an unverified current address, the new one alone", () => {
    expect(decideLink(pending({ new_confirmed: true, current_confirmed: true }), "current", live)).toEqual(
      LinkDecision.Move()
    )
    expect(decideLink(pending({ current_token_digest: null, new_confirmed: true }), "new", live)).toEqual(
      LinkDecision.Move()
    )
  })

  it("a change is void once expired, its account gone or inactive, its session ended, or a way in changed", () => {
    const used = pending({ new_confirmed: true, current_confirmed: true })
    expect(decideLink(used, "new", { ...live, now: at("2026-12-01T12:30:00Z") })).toEqual(
      LinkDecision.Void({ reason: "expired" })
    )
    expect(decideLink(used, "new", { ...live, account: Option.none() })).toEqual(
      LinkDecision.Void({ reason: "account_gone" })
    )
    expect(
      decideLink(used, "new", { ...live, account: Option.some({ is_active: false, credential_version: 3 }) })
    ).toEqual(LinkDecision.Void({ reason: "account_gone" }))
    expect(decideLink(used, "new", { ...live, sessionLive: false })).toEqual(
      LinkDecision.Void({ reason: "session_ended" })
    )
    expect(
      decideLink(used, "new", { ...live, account: Option.some({ is_active: true, credential_version: 4 }) })
    ).toEqual(LinkDecision.Void({ reason: "credentials_changed" }))
  })
})

describe("an address change's undo", () => {
  const changedAt = at("2026-12-01T12:00:00Z")

  it("lives until its window ends", () => {
    const undo = {
      token_digest: "d",
      user_id: UserId.make("u1"),
      old_email: "old@example.com",
      new_email: "new@example.com",
      changed_at: changedAt,
      expires_at: at("2026-12-08T12:00:00Z")
    }
    expect(undoIsLive(undo, at("2026-12-08T11:59:59Z"))).toBe(true)
    expect(undoIsLive(undo, at("2026-12-08T12:00:00Z"))).toBe(false)
  })

  it("removes the password and the ways in added at or after the change, and keeps the older ones", () => {
    const eviction = undoEviction(
      {
        hasPassword: true,
        passkeys: [
          { id: "before", created_at: at("2026-11-30T09:00:00Z") },
          { id: "same-instant", created_at: changedAt },
          { id: "after", created_at: at("2026-12-02T09:00:00Z") }
        ],
        providers: [
          { id: "github", created_at: at("2026-11-01T09:00:00Z") },
          { id: "google", created_at: at("2026-12-01T13:00:00Z") }
        ]
      },
      changedAt
    )
    expect(eviction).toEqual({ password: true, passkeys: ["same-instant", "after"], providers: ["google"] })
    expect(undoEviction({ hasPassword: false, passkeys: [], providers: [] }, changedAt)).toEqual({
      password: false,
      passkeys: [],
      providers: []
    })
  })
})
