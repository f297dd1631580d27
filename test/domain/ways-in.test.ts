import { DateTime, Schema } from "effect"
import { describe, expect, it } from "vitest"
import { Email, normaliseEmail } from "../../domain/User.js"
import {
  auditTypeOf,
  decideProofOfAddress,
  decideRecentSignIn,
  decideRemoval,
  noticeOf,
  passwordChangeProof,
  Removal,
  sessionsEndedBy,
  type UserWaysIn,
  WayInChange
} from "../../domain/WaysIn.js"

const ways = (overrides: Partial<UserWaysIn>): UserWaysIn => ({
  hasPassword: false,
  linkedProviders: [],
  passkeys: [],
  ...overrides
})

describe("decideRemoval (spec OAuth rule 6, passkey rule 6)", () => {
  it.each([
    [
      "the only provider",
      ways({ linkedProviders: ["github"] }),
      Removal.Provider({ provider: "github" }),
      "LastWayToSignIn"
    ],
    [
      "a provider, a password left",
      ways({ hasPassword: true, linkedProviders: ["github"] }),
      Removal.Provider({ provider: "github" }),
      "Remove"
    ],
    [
      "a provider, another left",
      ways({ linkedProviders: ["github", "google"] }),
      Removal.Provider({ provider: "github" }),
      "Remove"
    ],
    [
      "a provider, a passkey left",
      ways({ linkedProviders: ["github"], passkeys: ["p1"] }),
      Removal.Provider({ provider: "github" }),
      "Remove"
    ],
    ["a provider not linked", ways({ hasPassword: true }), Removal.Provider({ provider: "google" }), "NotFound"],
    ["the only passkey", ways({ passkeys: ["p1"] }), Removal.Passkey({ id: "p1" }), "LastWayToSignIn"],
    ["a passkey, another left", ways({ passkeys: ["p1", "p2"] }), Removal.Passkey({ id: "p1" }), "Remove"],
    [
      "a passkey, a provider left",
      ways({ passkeys: ["p1"], linkedProviders: ["github"] }),
      Removal.Passkey({ id: "p1" }),
      "Remove"
    ],
    [
      "a passkey not the user's",
      ways({ hasPassword: true, passkeys: ["p1"] }),
      Removal.Passkey({ id: "p2" }),
      "NotFound"
    ]
  ] as const)("%s", (_, held, removal, expected) => {
    expect(decideRemoval(held, removal)._tag).toBe(expected)
  })
})

describe("decideRecentSignIn (adding a way in needs a recent sign-in)", () => {
  const now = DateTime.unsafeMake("2026-11-28T12:00:00Z")
  const seconds = Math.floor(DateTime.toEpochMillis(now) / 1000)
  it.each([
    ["a sign-in just now", seconds, "Recent"],
    ["a sign-in exactly max age ago", seconds - 600, "Recent"],
    ["a sign-in a second older than the max age", seconds - 601, "ReauthenticationRequired"],
    ["a token without auth_time (issued before the claim)", undefined, "ReauthenticationRequired"],
    ["a sign-in dated in the future", seconds + 5, "ReauthenticationRequired"]
  ] as const)("%s", (_, authTime, expected) => {
    const decision = decideRecentSignIn(authTime, now, 600)
    expect(decision._tag).toBe(expected)
    if (decision._tag === "ReauthenticationRequired") expect(decision.maxAgeSeconds).toBe(600)
  })
})

describe("passwordChangeProof", () => {
  it("asks for the current password when there is one, else for a recent sign-in", () => {
    expect(passwordChangeProof(true)._tag).toBe("CurrentPassword")
    expect(passwordChangeProof(false)._tag).toBe("RecentSignIn")
  })
})

describe("decideProofOfAddress (the takeover step)", () => {
  const held = ways({ hasPassword: true, passkeys: ["p1", "p2"], linkedProviders: ["github"] })

  it("evicts every way in of an account that never proved its address", () => {
    const decision = decideProofOfAddress({ is_verified: false }, held)
    expect(decision).toEqual({
      _tag: "Evict",
      eviction: { password: true, passkeys: ["p1", "p2"], providers: ["github"] }
    })
  })

  it("keeps the ways in of an account that proved its address", () => {
    expect(decideProofOfAddress({ is_verified: true }, held)._tag).toBe("Keep")
  })
})

describe("what each change does", () => {
  it.each([
    [WayInChange.PasswordSet(), "all_but_caller", "password.set", "password_set"],
    [WayInChange.PasswordChanged(), "all_but_caller", "password.changed", "password_changed"],
    [WayInChange.PasswordReset(), "all", "password.reset", "password_reset"],
    [
      WayInChange.PasskeyAdded({ passkey_id: "p", device_name: "Laptop" }),
      "none",
      "passkey.registered",
      "passkey_added"
    ],
    [
      WayInChange.PasskeyRemoved({ passkey_id: "p", device_name: "Laptop" }),
      "none",
      "passkey.removed",
      "passkey_removed"
    ],
    [WayInChange.ProviderLinked({ provider: "github", automatic: false }), "none", "oauth.linked", "provider_linked"],
    [
      WayInChange.ProviderLinked({ provider: "github", automatic: true }),
      "none",
      "oauth.auto_linked",
      "provider_linked"
    ],
    [WayInChange.ProviderUnlinked({ provider: "github" }), "none", "oauth.unlinked", "provider_unlinked"],
    [
      WayInChange.TakenOver({ removed: { password: true, passkeys: ["p"], providers: [] } }),
      "all",
      "takeover.sessions_ended",
      "taken_over"
    ],
    [WayInChange.Deactivated(), "all", "user.updated", null]
  ] as const)("%o", (change, ended, audited, notice) => {
    expect(sessionsEndedBy(change)).toBe(ended)
    expect(auditTypeOf(change)).toBe(audited)
    expect(noticeOf(change)?.kind ?? null).toBe(notice)
  })

  it("names what a takeover removed in its notice", () => {
    const removed = { password: true, passkeys: ["p1", "p2"], providers: ["github"] }
    expect(noticeOf(WayInChange.TakenOver({ removed }))?.subject).toBe(
      "the password, 2 passkeys, the linked github account"
    )
    const nothing = { password: false, passkeys: [], providers: [] }
    expect(noticeOf(WayInChange.TakenOver({ removed: nothing }))?.subject).toBe("")
  })
})

describe("email addresses compare with ASCII case folding only", () => {
  const decode = Schema.decodeUnknownEither(Email)

  it("folds ASCII letters, trims and composes (NFC)", () => {
    expect(normaliseEmail(" Alice@Example.COM ")).toBe("alice@example.com")
    expect(normaliseEmail("e\u0301lise@example.com")).toBe("\u00e9lise@example.com")
  })

  it("does not map other letters by Unicode case rules", () => {
    expect(normaliseEmail("\u00c9lise@example.com")).toBe("\u00c9lise@example.com")
    expect(normaliseEmail("\u0130nci@example.com")).toBe("\u0130nci@example.com")
  })

  it("refuses an address that normalisation would spell in ASCII: U+212A KELVIN SIGN is not k", () => {
    expect(decode("\u212Aate@example.com")._tag).toBe("Left")
    expect(decode("kate@example.com")._tag).toBe("Right")
  })

  it("keeps every address that the former rule (Unicode lower case) stored as it is", () => {
    for (const given of [
      "Alice@Example.com",
      "\u00c9LISE@B\u00dcCHER.de",
      "J\u00fcrgen@example.com",
      "\u03a3\u03c9@example.gr"
    ]) {
      const stored = given.trim().normalize("NFC").toLowerCase()
      expect(normaliseEmail(stored)).toBe(stored)
    }
  })
})
