import { Schema } from "effect"
// The package's own file: a bare "punycode" is Node's deprecated built-in module.
import punycode from "punycode/punycode.js"
import { Email } from "./User.js"

/**
 * What makes an address look like another, each with the words a refusal names it by; the
 * platform's Unicode data decides which code points belong to a class (RegExp property escapes).
 * Order matters: bidirectional controls are default-ignorable too, and are named for what they do.
 */
const characterRules: ReadonlyArray<{ readonly pattern: RegExp; readonly message: string }> = [
  // C0, DEL and C1 (U+0085 NEXT LINE…): no identifier of the service takes one.
  { pattern: /\p{Cc}/u, message: "must not contain control characters" },
  // U+202E shows `moc.lapyap@x` as `x@paypal.com`.
  {
    pattern: /\p{Bidi_Control}/u,
    message: "must not contain bidirectional controls (U+202A–U+202E, U+2066–U+2069, U+200E, U+200F)"
  },
  // Shown as nothing: `pay\u200Bpal` reads as `paypal` and is another address.
  {
    pattern: /\p{Default_Ignorable_Code_Point}/u,
    message: "must not contain invisible characters (default-ignorable code points such as U+200B or U+00AD)"
  }
]

const malformedLabel = "must not have an xn-- domain label that is not valid Punycode"
const mixedScripts = "must not mix Latin letters with Cyrillic or Greek ones in the local part or a domain label"

/** The first rule `text` breaks, by its message, if any. */
const brokenCharacterRule = (text: string) => characterRules.find((rule) => rule.pattern.test(text))?.message

// Script, not Script_Extensions: a mark or a dot shared by several scripts (U+00B7) belongs to
// none of them, so only letters of two scripts make a label mixed.
const latin = /\p{Script=Latin}/u
const cyrillicOrGreek = /[\p{Script=Cyrillic}\p{Script=Greek}]/u

/** Whether a local part or a label holds Latin letters beside Cyrillic or Greek ones (`pаypal`). */
const mixesScripts = (text: string) => latin.test(text) && cyrillicOrGreek.test(text)

/** The longest DNS label: a longer `xn--` label is no A-label, and is never decoded. */
const MAX_LABEL_LENGTH = 63

/**
 * A domain label as a mail client may show it: an `xn--` label decoded, else itself; undefined
 * when the label is no A-label (it does not decode, decodes to ASCII only, or is not the
 * canonical encoding of what it decodes to), since what it shows cannot then be known.
 */
const shownLabel = (label: string): string | undefined => {
  if (!label.startsWith("xn--")) return label
  if (label.length > MAX_LABEL_LENGTH) return undefined
  const encoded = label.slice(4)
  try {
    const decoded = punycode.decode(encoded)
    return /[^\0-\x7f]/.test(decoded) && punycode.encode(decoded) === encoded ? decoded : undefined
  } catch {
    return undefined
  }
}

/**
 * Why an address (normalised, domain/User.ts `Email`) would look like another, by the rule it
 * breaks, or undefined when it looks like itself alone: a control, bidirectional or invisible
 * character, in the address or in what one of its `xn--` labels decodes to; an `xn--` label that
 * does not decode; a local part or a label mixing Latin with Cyrillic or Greek. Letters of one
 * script, digits and hyphens are fine: `пример.рф`, `josé@exämple.com`.
 */
export const lookAlikeProblem = (address: string): string | undefined => {
  const at = address.lastIndexOf("@")
  const parts = [at === -1 ? address : address.slice(0, at)]
  for (const label of at === -1 ? [] : address.slice(at + 1).split(".")) {
    const shown = shownLabel(label)
    if (shown === undefined) return malformedLabel
    parts.push(shown)
  }
  for (const part of parts) {
    const broken = brokenCharacterRule(part)
    if (broken !== undefined) return broken
  }
  return parts.some(mixesScripts) ? mixedScripts : undefined
}

/**
 * An address entering the service (registration, address change, sign-up by mail, the CLI): an
 * `Email` that looks like no other (lookAlikeProblem). Stored addresses and lookups keep `Email`,
 * so that an account made before this rule still loads, signs in and is found.
 */
export const NewEmail = Schema.String.pipe(
  // The characters first, as given: an invisible one is named as such, even where the address
  // pattern would refuse it too (U+FEFF is white space to it) or trimming drop it.
  Schema.filter((given) => brokenCharacterRule(given)),
  Schema.compose(Email),
  // Then the address as compared, its length bounded by Email before any label is decoded.
  Schema.filter((email) => lookAlikeProblem(email))
).annotations({
  identifier: "NewEmail",
  jsonSchema: {
    type: "string",
    format: "email",
    maxLength: 254,
    description:
      "An email address that looks like no other: no control, bidirectional or invisible (default-ignorable) character, and no local part or domain label (xn-- labels decoded) mixing Latin with Cyrillic or Greek."
  }
})
export type NewEmail = typeof NewEmail.Type
