import { DateTime } from "effect"
import { describe, expect, it } from "vitest"
import { amrOf, claimsFor, issuesRefreshToken } from "../../domain/oidc/Claims.js"
import { decideRedemption, type StoredCode } from "../../domain/oidc/Code.js"
import { decideGrantRefresh, endsGrants } from "../../domain/oidc/Grant.js"
import { WayInChange } from "../../domain/WaysIn.js"

const now = DateTime.unsafeMake("2026-12-01T12:00:00Z")
const code: StoredCode = {
  digest: "d",
  client_id: "app",
  user_id: "u1",
  redirect_uri: "https://app.example.com/cb",
  code_challenge: "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM",
  scopes: ["openid"],
  resources: [],
  nonce: "n",
  auth_time: 1,
  amr: ["pwd"],
  expires_at: DateTime.add(now, { seconds: 30 }),
  redeemed_at: null,
  family_id: null
}
const presented = {
  client_id: "app",
  redirect_uri: "https://app.example.com/cb",
  challenge_of_verifier: "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM"
}

describe("decideRedemption", () => {
  it("redeems a code once, for its client, redirect URI and verifier, before it expires", () => {
    expect(decideRedemption(code, presented, now)).toMatchObject({ _tag: "Redeem", code })
  })

  it.each([
    ["an unknown code", undefined, presented, "not known"],
    ["another client's code, told as unknown", code, { ...presented, client_id: "other" }, "not known"],
    ["an expired code", { ...code, expires_at: now }, presented, "expired"],
    ["another redirect URI", code, { ...presented, redirect_uri: "https://app.example.com/cb2" }, "redirect_uri"],
    ["no redirect URI", code, { ...presented, redirect_uri: undefined }, "redirect_uri"],
    ["no verifier", code, { ...presented, challenge_of_verifier: undefined }, "missing"],
    ["another verifier", code, { ...presented, challenge_of_verifier: `${"A".repeat(42)}M` }, "does not match"]
  ])("refuses %s", (_, stored, given, reason) => {
    expect(decideRedemption(stored, given, now)).toMatchObject({
      _tag: "Refuse",
      reason: expect.stringContaining(reason)
    })
  })

  it("tells a replay, by whoever presents it, with the grant its first redemption started", () => {
    const redeemed = { ...code, redeemed_at: now, family_id: "f1" }
    expect(decideRedemption(redeemed, presented, now)).toMatchObject({ _tag: "Replayed", family_id: "f1" })
    expect(decideRedemption(redeemed, { ...presented, client_id: "other" }, now)).toMatchObject({ _tag: "Replayed" })
  })
})

describe("claimsFor", () => {
  const user = {
    id: "u1",
    email: "ada@example.com",
    is_verified: true,
    roles: ["editor"],
    permissions: ["posts:write"],
    fields: { name: "Ada Lovelace", locale: "en-GB", plan: "pro", picture: 7 },
    updated_at: 1_700_000_000
  }

  it("shows sub alone for openid, and each scope's claims only under it", () => {
    expect(claimsFor(user, ["openid"])).toEqual({ sub: "u1" })
    expect(claimsFor(user, ["openid", "email"])).toEqual({ sub: "u1", email: "ada@example.com", email_verified: true })
    expect(claimsFor(user, ["openid", "profile"])).toEqual({
      sub: "u1",
      name: "Ada Lovelace",
      locale: "en-GB",
      updated_at: 1_700_000_000
    })
    expect(claimsFor(user, ["openid", "permissions"])).toEqual({
      sub: "u1",
      roles: ["editor"],
      permissions: ["posts:write"]
    })
  })
})

describe("amrOf (RFC 8176)", () => {
  it.each([
    [{ kind: "password" } as const, ["pwd"]],
    [{ kind: "passkey", userVerified: true } as const, ["hwk", "user"]],
    [{ kind: "passkey", userVerified: false } as const, ["hwk"]],
    [{ kind: "mailed" } as const, ["otp"]],
    [{ kind: "provider" } as const, ["fed"]]
  ])("%o: %o", (method, amr) => expect(amrOf(method)).toEqual(amr))
})

describe("issuesRefreshToken (OIDC Core §11)", () => {
  it("with openid only under offline_access; a plain OAuth grant always", () => {
    expect(issuesRefreshToken(["openid", "email"])).toBe(false)
    expect(issuesRefreshToken(["openid", "offline_access"])).toBe(true)
    expect(issuesRefreshToken(["reports:read"])).toBe(true)
    expect(issuesRefreshToken([])).toBe(true)
  })
})

describe("endsGrants", () => {
  it("ends the user's grants on a reset, a takeover, a deactivation and an undo, not on a proven change", () => {
    const removed = { password: false, passkeys: [], providers: [] }
    expect(endsGrants(WayInChange.PasswordReset())).toBe(true)
    expect(endsGrants(WayInChange.TakenOver({ removed }))).toBe(true)
    expect(endsGrants(WayInChange.Deactivated())).toBe(true)
    expect(endsGrants(WayInChange.EmailChangeUndone({ restored: "a@example.com", removed }))).toBe(true)
    expect(endsGrants(WayInChange.PasswordChanged())).toBe(false)
    expect(endsGrants(WayInChange.EmailChanged({ from: "a@example.com", to: "b@example.com", undoable: true }))).toBe(
      false
    )
    expect(endsGrants(WayInChange.PasskeyAdded({ passkey_id: "p", device_name: "d" }))).toBe(false)
  })
})

describe("decideGrantRefresh", () => {
  const grant = {
    grant_id: "g",
    client_id: "app",
    user_id: "u1",
    scopes: ["openid"],
    resources: [],
    auth_time: 1,
    amr: ["pwd"],
    created_at: now,
    last_used_at: now,
    expires_at: DateTime.add(now, { hours: 1 }),
    revoked_at: null
  }
  const token = {
    digest: "t",
    grant_id: "g",
    issued_at: now,
    expires_at: DateTime.add(now, { hours: 1 }),
    rotated_at: null
  }

  it("rotates a live token of a live grant; an ended grant wins over everything, then expiry, then reuse", () => {
    expect(decideGrantRefresh(undefined, now)._tag).toBe("Unknown")
    expect(decideGrantRefresh({ token, grant }, now)).toMatchObject({ _tag: "Rotate", grant })
    const rotated = { ...token, rotated_at: now }
    expect(decideGrantRefresh({ token: rotated, grant }, now)).toMatchObject({ _tag: "ReuseDetected", grant })
    expect(decideGrantRefresh({ token: rotated, grant: { ...grant, revoked_at: now } }, now)._tag).toBe("Revoked")
    expect(decideGrantRefresh({ token: { ...rotated, expires_at: now }, grant }, now)._tag).toBe("Expired")
  })
})
