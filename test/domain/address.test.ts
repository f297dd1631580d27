import { describe, expect, it } from "@effect/vitest"
import { Either, Option, ParseResult, Schema } from "effect"
import { NewEmail } from "../../domain/Address.js"
import { OAuthUserInfo, providerEmail } from "../../domain/OAuth.js"
import { Email } from "../../domain/User.js"

/**
 * An address must not look like another (docs/behaviour.md, "Emails"): where one enters, an
 * invisible, bidirectional or control character, or Latin mixed with Cyrillic or Greek in one
 * part, is refused by the rule it breaks; stored addresses still decode as `Email`.
 */

const invisible = /invisible characters/
const bidirectional = /bidirectional controls/
const control = /control characters/
const mixed = /mix Latin letters with Cyrillic or Greek/
const malformed = /xn-- domain label that is not valid Punycode/

/** The messages refusing `address` as a new one; none when it is accepted. */
const refusal = (address: string) =>
  Either.match(Schema.decodeUnknownEither(NewEmail)(address), {
    onLeft: (error) => ParseResult.ArrayFormatter.formatErrorSync(error).map((issue) => issue.message),
    onRight: () => []
  })

const hex = (char: string) => `U+${(char.codePointAt(0) ?? 0).toString(16).toUpperCase().padStart(4, "0")}`

const refused: ReadonlyArray<readonly [string, string, RegExp]> = [
  ...["\u200B", "\u200D", "\u2060", "\u00AD", "\uFEFF"].map(
    (char) => [`${hex(char)} in the local part`, `pay${char}pal@example.com`, invisible] as const
  ),
  ["U+200B in a domain label", "paypal@pay\u200Bpal.com", invisible],
  ["U+FEFF before the address, which trimming would drop", "\uFEFFpaypal@example.com", invisible],
  ...["\u202A", "\u202B", "\u202C", "\u202D", "\u202E", "\u2066", "\u2067", "\u2068", "\u2069", "\u200E", "\u200F"].map(
    (char) => [hex(char), `x${char}@paypal.com`, bidirectional] as const
  ),
  ["a C1 control (U+0085)", "pay\u0085pal@example.com", control],
  ["Latin with a Cyrillic а in the local part", "p\u0430ypal@example.com", mixed],
  ["Latin with a Greek ο in a domain label", "ada@g\u03BFogle.com", mixed],
  ["an xn-- label decoding to Latin with Cyrillic", "ada@xn--pypal-4ve.com", mixed],
  ["an xn-- label decoding to an invisible character", "ada@xn--ab-g1t.com", invisible],
  ["an xn-- label that does not decode", "ada@xn--99999999999.com", malformed],
  ["an xn-- label holding a character Punycode has no digit for", "ada@xn--ab-é.com", malformed],
  ["an xn-- label decoding to ASCII only", "ada@xn--abc-.com", malformed],
  ["an empty xn-- label", "ada@xn--.com", malformed],
  ["an xn-- label longer than a DNS label", `ada@xn--${"a".repeat(60)}-4ve.com`, malformed]
]

const accepted: ReadonlyArray<readonly [string, string]> = [
  ["plain ASCII", "ada@example.com"],
  ["accented Latin", "josé@exämple.com"],
  ["a Cyrillic-only label", "иван@пример.рф"],
  ["a Cyrillic local part with digits and hyphens", "иван-99@пример-1.рф"],
  ["a Greek-only label", "ada@παράδειγμα.ελ"],
  ["an xn-- label decoding to one script", "ada@xn--mnchen-3ya.de"],
  ["an xn-- label decoding to Cyrillic only", "ada@xn--e1afmkfd.xn--p1ai"],
  ["Latin in the local part, Cyrillic in the domain (each part is one script)", "ada@почта.пример.рф"],
  ["a middle dot, which several scripts share", "l·l@example.cat"]
]

describe("NewEmail: an address that looks like no other", () => {
  for (const [label, address, rule] of refused) {
    it(`refuses ${label}, naming the rule and not the address`, () => {
      const messages = refusal(address)
      expect(messages).toEqual([expect.stringMatching(rule)])
      expect(messages.join()).not.toContain(address)
    })
  }

  for (const [label, address] of accepted) {
    it(`accepts ${label}`, () => {
      expect(refusal(address)).toEqual([])
    })
  }

  it("normalises as Email does: an upper-case XN-- label is decoded too", () => {
    expect(Schema.decodeUnknownSync(NewEmail)(" Ada@XN--MNCHEN-3YA.de ")).toBe("ada@xn--mnchen-3ya.de")
    expect(refusal("ada@XN--PYPAL-4VE.com")).toEqual([expect.stringMatching(mixed)])
  })

  it("still refuses what Email refuses", () => {
    expect(refusal("not-an-email")).toEqual(["must be one plain email address"])
    expect(refusal("\u212Aate@example.com")).toHaveLength(1)
  })

  it("leaves stored addresses to Email, which still decodes them", () => {
    for (const [, address] of refused.filter(([, address]) => !address.includes("\uFEFF"))) {
      expect(Either.isRight(Schema.decodeUnknownEither(Email)(address)), address).toBe(true)
    }
  })
})

describe("a provider's look-alike email", () => {
  const info = (email: string) =>
    Schema.decodeUnknownSync(OAuthUserInfo)({
      provider: "github",
      provider_user_id: "1",
      email,
      email_verified: true,
      name: null,
      picture: null,
      raw: {}
    })

  it("counts as no email", () => {
    expect(providerEmail(info("pay\u200Bpal@example.com"))).toEqual(Option.none())
    expect(providerEmail(info("p\u0430ypal@example.com"))).toEqual(Option.none())
    expect(providerEmail(info("ada@xn--pypal-4ve.com"))).toEqual(Option.none())
    expect(providerEmail(info("Ada@Example.com"))).toEqual(Option.some("ada@example.com"))
  })
})
