import { escapeHtml } from "./Text.js"

/** A message to one address, as plain text and as HTML (sent as multipart/alternative). */
export interface MailMessage {
  readonly to: string
  readonly subject: string
  readonly text: string
  readonly html: string
}

/** What a mail is for; also its templates' file names and the hosted page its link opens. */
export const mailPurposes = ["verify-email", "reset-password"] as const
export type MailPurpose = (typeof mailPurposes)[number]

/**
 * A purpose's two templates. The text one begins with a `Subject: …` line, so that one file
 * holds everything a reader of the plain mail sees.
 */
export interface MailTemplate {
  readonly text: string
  readonly html: string
}

export type MailTemplates = Readonly<Record<MailPurpose, MailTemplate>>

/** Replacements for some of the built-in templates, from a deployment's template folder. */
export type MailTemplateReplacements = Readonly<Partial<Record<MailPurpose, Partial<MailTemplate>>>>

/** What a template may name, as `{{name}}`. */
export const placeholderNames = ["link", "token", "product", "email"] as const
type PlaceholderName = (typeof placeholderNames)[number]

const placeholder = /\{\{\s*([^{}]*?)\s*\}\}/g
const subjectLine = /^Subject:[ \t]*(.*?)[ \t]*\r?\n/

const isPlaceholderName = (name: string): name is PlaceholderName =>
  (placeholderNames as ReadonlyArray<string>).includes(name)

/**
 * What is wrong with a template, one sentence each; empty when it is usable. A typo in a
 * placeholder would otherwise reach every reader as `{{lnik}}`, and a mail with neither the link
 * nor the token leaves its reader no way to finish.
 */
export const templateFaults = (part: keyof MailTemplate, template: string): ReadonlyArray<string> => {
  const names = [...template.matchAll(placeholder)].map((match) => match[1] ?? "")
  const unknown = [...new Set(names.filter((name) => !isPlaceholderName(name)))]
  return [
    ...(part === "text" && !subjectLine.test(template) ? ["does not begin with a 'Subject: …' line"] : []),
    ...unknown.map(
      (name) =>
        `names {{${name}}}, which is not a placeholder; expected ${placeholderNames.map((n) => `{{${n}}}`).join(", ")}`
    ),
    ...(names.includes("link") || names.includes("token") ? [] : ["names neither {{link}} nor {{token}}"])
  ]
}

const fill = (template: string, values: Readonly<Record<PlaceholderName, string>>, encode: (text: string) => string) =>
  template.replace(placeholder, (whole, name: string) => (isPlaceholderName(name) ? encode(values[name]) : whole))

/** PUBLIC_URL/<path>?token=…, keeping any path PUBLIC_URL has. */
export const mailLink = (publicUrl: URL, purpose: MailPurpose, token: string) => {
  const url = new URL(purpose, publicUrl.href.endsWith("/") ? publicUrl : `${publicUrl.href}/`)
  url.searchParams.set("token", token)
  return url.href
}

/** Where the links lead and whose name the mails carry. */
export interface MailContext {
  readonly publicUrl: URL
  readonly product: string
}

/**
 * The mail of a purpose from its templates: the subject and text from the text template, the
 * HTML part from the HTML one, where every value is escaped.
 */
export const composeMail = (
  templates: MailTemplates,
  context: MailContext,
  purpose: MailPurpose,
  email: string,
  token: string
): MailMessage => {
  const values = { link: mailLink(context.publicUrl, purpose, token), token, product: context.product, email }
  const { text, html } = templates[purpose]
  const subject = subjectLine.exec(text)?.[1] ?? ""
  const asIs = (value: string) => value
  return {
    to: email,
    // A header is one line, whatever a value holds.
    subject: fill(subject, values, asIs).replace(/[\r\n]+/g, " "),
    text: fill(text.replace(subjectLine, "").replace(/^(\r?\n)+/, ""), values, asIs),
    html: fill(html, values, escapeHtml)
  }
}

/** The built-in templates with a deployment's replacements in place. */
export const withReplacements = (builtIn: MailTemplates, replacements: MailTemplateReplacements): MailTemplates => ({
  "verify-email": { ...builtIn["verify-email"], ...replacements["verify-email"] },
  "reset-password": { ...builtIn["reset-password"], ...replacements["reset-password"] }
})
