import { describe, expect, it } from "@effect/vitest"
import { DateTime, Either, Option, Schema } from "effect"
import {
  AuthenticationChallengeKey,
  CredentialId,
  DateTimeUtcWithoutZone,
  decideSignCount,
  Passkey,
  PasskeyInfo,
  RegistrationChallengeKey,
  type SignCountDecision,
  toPasskeyInfo
} from "../../domain/Passkey.js"

const CREATED = Date.UTC(2026, 10, 23, 10, 0, 0, 123)

/** A stored passkey in its encoded (JSON, storage) form; each test changes what it looks at. */
const encoded = (overrides: Record<string, unknown> = {}) => ({
  id: "0b7e4a52-3c1d-4c8e-9f3a-6d2b1e0a9c47",
  user_id: "01890a5d-ac96-774b-bcce-b302099a8057",
  credential_id: "q83vEjRWeJA",
  public_key: "pQECAyYgASFYIA",
  sign_count: 0,
  transports: ["internal", "hybrid"],
  backed_up: true,
  device_name: "Alice's phone",
  created_at: new Date(CREATED).toISOString(),
  last_used_at: null,
  ...overrides
})
const decodePasskey = Schema.decodeUnknownEither(Passkey)
const passkey = (overrides: Record<string, unknown> = {}) => Schema.decodeUnknownSync(Passkey)(encoded(overrides))

describe("decideSignCount (the sign-count rule)", () => {
  const table: ReadonlyArray<readonly [stored: number, reported: number, expected: SignCountDecision]> = [
    // A counter that moved forward advances, from the stored count it was decided on.
    [0, 1, { _tag: "Advance", expected: 0, reported: 1 }],
    [5, 6, { _tag: "Advance", expected: 5, reported: 6 }],
    [5, 1_000, { _tag: "Advance", expected: 5, reported: 1_000 }],
    [0xffff_fffe, 0xffff_ffff, { _tag: "Advance", expected: 0xffff_fffe, reported: 0xffff_ffff }],
    // A reported 0 skips the check, whatever was stored before (synced passkeys).
    [0, 0, { _tag: "CounterNotUsed" }],
    [1, 0, { _tag: "CounterNotUsed" }],
    [42, 0, { _tag: "CounterNotUsed" }],
    [0xffff_ffff, 0, { _tag: "CounterNotUsed" }],
    // A non-zero counter that did not move forward: another copy has signed.
    [5, 5, { _tag: "SuspectedClone", stored: 5, reported: 5 }],
    [5, 4, { _tag: "SuspectedClone", stored: 5, reported: 4 }],
    [5, 1, { _tag: "SuspectedClone", stored: 5, reported: 1 }],
    [0xffff_ffff, 0xffff_ffff, { _tag: "SuspectedClone", stored: 0xffff_ffff, reported: 0xffff_ffff }]
  ]

  for (const [stored, reported, expected] of table) {
    it(`stored ${stored}, reported ${reported}: ${expected._tag}`, () => {
      expect(decideSignCount(stored, reported)).toEqual(expected)
    })
  }
})

describe("Passkey (stored)", () => {
  it("decodes its stored form and encodes back to it", () => {
    const used = encoded({ sign_count: 7, last_used_at: new Date(CREATED + 1).toISOString() })
    const decoded = Schema.decodeUnknownSync(Passkey)(used)
    expect(decoded.last_used_at).toEqual(Option.some(DateTime.unsafeMake(CREATED + 1)))
    expect(Schema.encodeSync(Passkey)(decoded)).toEqual(used)
    expect(passkey().last_used_at).toEqual(Option.none())
  })

  const refused: ReadonlyArray<readonly [string, Record<string, unknown>]> = [
    ["an id that is no UUID", { id: "passkey-1" }],
    ["an empty user id", { user_id: "" }],
    ["a credential id with padding", { credential_id: "q83vEjRWeJA=" }],
    ["a credential id in standard base64", { credential_id: "q83v+jRW/JA" }],
    ["a credential id of no whole number of bytes", { credential_id: "q83vE" }],
    ["a credential id over 1023 bytes", { credential_id: "A".repeat(1368) }],
    ["an empty public key", { public_key: "" }],
    ["a negative sign count", { sign_count: -1 }],
    ["a fractional sign count", { sign_count: 1.5 }],
    ["a sign count over 32 bits", { sign_count: 0x1_0000_0000 }]
  ]
  for (const [what, overrides] of refused) {
    it(`refuses ${what}`, () => {
      expect(Either.isLeft(decodePasskey(encoded(overrides)))).toBe(true)
    })
  }

  it("accepts a credential id of exactly 1023 bytes and the largest 32-bit count", () => {
    const id = Buffer.alloc(1023, 7).toString("base64url")
    expect(id).toHaveLength(1364)
    expect(Either.isRight(decodePasskey(encoded({ credential_id: id, sign_count: 0xffff_ffff })))).toBe(true)
    expect(Either.isRight(Schema.decodeUnknownEither(CredentialId)(id))).toBe(true)
  })
})

describe("PasskeyInfo (listed)", () => {
  const encodeInfo = Schema.encodeSync(PasskeyInfo)

  it("lists a never-used passkey with last_used_at null and times without a zone designator", () => {
    expect(encodeInfo(toPasskeyInfo(passkey()))).toEqual({
      id: "0b7e4a52-3c1d-4c8e-9f3a-6d2b1e0a9c47",
      device_name: "Alice's phone",
      transports: ["internal", "hybrid"],
      backed_up: true,
      created_at: "2026-11-23T10:00:00.123",
      last_used_at: null
    })
  })

  it("lists a used passkey's last use, and never its key, counter or owner", () => {
    const used = passkey({ sign_count: 9, last_used_at: new Date(Date.UTC(2027, 0, 2, 3, 4, 5, 6)).toISOString() })
    const listed = encodeInfo(toPasskeyInfo(used))
    expect(listed.last_used_at).toBe("2027-01-02T03:04:05.006")
    expect(Object.keys(listed).sort()).toEqual([
      "backed_up",
      "created_at",
      "device_name",
      "id",
      "last_used_at",
      "transports"
    ])
  })

  it("keeps whole seconds with their milliseconds: one form for every instant", () => {
    const instant = DateTime.unsafeMake(Date.UTC(2026, 0, 1, 0, 0, 0, 0))
    expect(Schema.encodeSync(DateTimeUtcWithoutZone)(instant)).toBe("2026-01-01T00:00:00.000")
  })
})

describe("DateTimeUtcWithoutZone", () => {
  const decode = Schema.decodeUnknownEither(DateTimeUtcWithoutZone)

  it("reads a date-time without a zone as UTC, with or without a fraction", () => {
    expect(decode("2026-11-23T10:00:00.123")).toEqual(Either.right(DateTime.unsafeMake(CREATED)))
    expect(decode("2026-11-23T10:00:00")).toEqual(Either.right(DateTime.unsafeMake(CREATED - 123)))
  })

  for (const text of [
    "2026-11-23T10:00:00.123Z",
    "2026-11-23T10:00:00.123+01:00",
    "2026-11-23",
    "2026-02-30T00:00:00.000",
    "2026-11-23T24:00:00.000",
    "2026-13-01T00:00:00.000",
    "not a date"
  ]) {
    it(`refuses ${JSON.stringify(text)}`, () => {
      expect(Either.isLeft(decode(text))).toBe(true)
    })
  }
})

describe("challenge keys", () => {
  const id = "0b7e4a52-3c1d-4c8e-9f3a-6d2b1e0a9c47"
  it("name their ceremony: a registration key is no authentication key and the reverse", () => {
    const isRegistration = Schema.is(RegistrationChallengeKey)
    const isAuthentication = Schema.is(AuthenticationChallengeKey)
    expect(isRegistration(`passkey:reg:${id}`)).toBe(true)
    expect(isAuthentication(`passkey:auth:${id}`)).toBe(true)
    expect(isRegistration(`passkey:auth:${id}`)).toBe(false)
    expect(isAuthentication(`passkey:reg:${id}`)).toBe(false)
    expect(isAuthentication(`passkey:auth:${id}x`)).toBe(false)
    expect(isAuthentication("passkey:auth:")).toBe(false)
  })
})
