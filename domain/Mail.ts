import { DateTime } from "effect"
import { underPublicUrl } from "./Here.js"
import { noticeWording, oneLine, type SecurityNotice } from "./SecurityNotice.js"
import { escapeHtml } from "./Text.js"

/** A message to one address, as plain text and as HTML (sent as multipart/alternative). */
export interface MailMessage {
  readonly to: string
  readonly subject: string
  readonly text: string
  readonly html: string
}

/** What a mail that carries a token is for; also the hosted page its link opens. */
export const mailPurposes = ["verify-email", "reset-password", "confirm-email"] as const
export type MailPurpose = (typeof mailPurposes)[number]

/**
 * The address change's mails to the address an account moves from: the approval a verified
 * current address must give (its link opens /confirm-email, as the new address's does), and,
 * once the change is made, the undo link (/undo-email-change). Each names the new address.
 */
export const addressChangeMails = ["approve-email-change", "undo-email-change"] as const
export type AddressChangeMail = (typeof addressChangeMails)[number]

/**
 * Every mail's templates, by their file names: the token mails, the address change's two mails
 * to the old address, the sign-in mail (a link and a code) and the owner's notice of a change of
 * their ways in (docs/behaviour.md, "Ways in").
 */
export const templateNames = [...mailPurposes, ...addressChangeMails, "sign-in", "security-notice"] as const
export type TemplateName = (typeof templateNames)[number]

/**
 * A mail's two templates. The text one begins with a `Subject: …` line, so that one file
 * holds everything a reader of the plain mail sees.
 */
export interface MailTemplate {
  readonly text: string
  readonly html: string
}

export type MailTemplates = Readonly<Record<TemplateName, MailTemplate>>

/** Replacements for some of the built-in templates, from a deployment's template folder. */
export type MailTemplateReplacements = Readonly<Partial<Record<TemplateName, Partial<MailTemplate>>>>

const tokenPlaceholders = ["link", "token", "product", "email"] as const
/** A notice names no link and no token: it asks nothing of its reader, so it has nothing to click. */
const noticePlaceholders = ["change", "summary", "when", "ip_address", "client", "product", "email"] as const

/** What a mail's templates may name, as `{{name}}`. */
export const placeholdersOf: Readonly<Record<TemplateName, ReadonlyArray<string>>> = {
  "verify-email": tokenPlaceholders,
  "reset-password": tokenPlaceholders,
  "confirm-email": tokenPlaceholders,
  "approve-email-change": [...tokenPlaceholders, "new_email"],
  "undo-email-change": [...tokenPlaceholders, "new_email"],
  "sign-in": [...tokenPlaceholders, "code"],
  "security-notice": noticePlaceholders
}

const placeholder = /\{\{\s*([^{}]*?)\s*\}\}/g
const subjectLine = /^Subject:[ \t]*(.*?)[ \t]*\r?\n/

/**
 * What a template must name for its mail to serve: a token mail's reader needs the link or the
 * token to finish, a notice's reader needs to learn what changed.
 */
const missingFault = (mail: TemplateName, names: ReadonlyArray<string>): ReadonlyArray<string> => {
  if (mail === "security-notice") return names.includes("change") ? [] : ["does not name {{change}}"]
  if (mail === "sign-in") {
    return names.includes("link") || names.includes("code") ? [] : ["names neither {{link}} nor {{code}}"]
  }
  return names.includes("link") || names.includes("token") ? [] : ["names neither {{link}} nor {{token}}"]
}

/**
 * What is wrong with a template, one sentence each; empty when it is usable. A typo in a
 * placeholder would otherwise reach every reader as `{{lnik}}`, and a mail without what it
 * must say (the link or the token; the change) leaves its reader nothing to act on.
 */
export const templateFaults = (
  mail: TemplateName,
  part: keyof MailTemplate,
  template: string
): ReadonlyArray<string> => {
  const known = placeholdersOf[mail]
  const names = [...template.matchAll(placeholder)].map((match) => match[1] ?? "")
  const unknown = [...new Set(names.filter((name) => !known.includes(name)))]
  return [
    ...(part === "text" && !subjectLine.test(template) ? ["does not begin with a 'Subject: …' line"] : []),
    ...unknown.map(
      (name) =>
        `names {{${name}}}, which is not a placeholder of ${mail}; expected ${known.map((n) => `{{${n}}}`).join(", ")}`
    ),
    ...missingFault(mail, names)
  ]
}

/** A mail to `to` from its templates and the values of its placeholders. */
const render = (template: MailTemplate, to: string, values: Readonly<Record<string, string>>): MailMessage => {
  const fill = (text: string, encode: (value: string) => string) =>
    text.replace(placeholder, (whole, name: string) =>
      Object.hasOwn(values, name) ? encode(values[name] ?? "") : whole
    )
  const asIs = (value: string) => value
  const subject = subjectLine.exec(template.text)?.[1] ?? ""
  return {
    to,
    // A header is one line, whatever a value holds.
    subject: fill(subject, asIs).replace(/[\r\n]+/g, " "),
    text: fill(template.text.replace(subjectLine, "").replace(/^(\r?\n)+/, ""), asIs),
    html: fill(template.html, escapeHtml)
  }
}

/** The hosted pages a mailed link opens. */
export type LinkPage = MailPurpose | "sign-in" | "undo-email-change"

/** The page each address-change mail's link opens: both links of a change are used at /confirm-email. */
const addressChangePage: Readonly<Record<AddressChangeMail, LinkPage>> = {
  "approve-email-change": "confirm-email",
  "undo-email-change": "undo-email-change"
}

/** PUBLIC_URL/<path>?token=…, keeping any path PUBLIC_URL has. */
export const mailLink = (publicUrl: URL, purpose: LinkPage, token: string) => {
  const url = underPublicUrl(publicUrl, purpose)
  url.searchParams.set("token", token)
  return url.href
}

/** Where the links lead and whose name the mails carry. */
export interface MailContext {
  readonly publicUrl: URL
  readonly product: string
  /** The OpenID Provider's sign-in page (absolute), when the provider is on: a link asked from it returns there. */
  readonly providerSignIn?: string | undefined
}

/**
 * The mail of a purpose from its templates: the subject and text from the text template,
 * the HTML part from the HTML one, where every value is escaped.
 */
export const composeMail = (
  templates: MailTemplates,
  context: MailContext,
  purpose: MailPurpose,
  email: string,
  token: string
): MailMessage =>
  render(templates[purpose], email, {
    link: mailLink(context.publicUrl, purpose, token),
    token,
    product: context.product,
    email
  })

/** An address change's mail to the old address, naming the address the account moves (or moved) to. */
export const composeAddressChangeMail = (
  templates: MailTemplates,
  context: MailContext,
  kind: AddressChangeMail,
  mail: { readonly email: string; readonly token: string; readonly new_email: string }
): MailMessage =>
  render(templates[kind], mail.email, {
    link: mailLink(context.publicUrl, addressChangePage[kind], mail.token),
    token: mail.token,
    new_email: mail.new_email,
    product: context.product,
    email: mail.email
  })

/** The sign-in mail: the link to PUBLIC_URL/sign-in and the code, either of which signs its reader in. */
export const composeSignInMail = (
  templates: MailTemplates,
  context: MailContext,
  mail: {
    readonly email: string
    readonly token: string
    readonly code: string
    readonly authorization_request?: string | undefined
  }
): MailMessage =>
  render(templates["sign-in"], mail.email, {
    link:
      mail.authorization_request !== undefined && context.providerSignIn !== undefined
        ? `${context.providerSignIn}?${new URLSearchParams({ request: mail.authorization_request, token: mail.token })}`
        : mailLink(context.publicUrl, "sign-in", mail.token),
    token: mail.token,
    code: mail.code,
    product: context.product,
    email: mail.email
  })

/** When a change happened, to the second, in UTC: the same reading wherever the reader is. */
const whenOf = (at: DateTime.Utc) => {
  const iso = DateTime.formatIso(at)
  return `${iso.slice(0, 10)} ${iso.slice(11, 19)} UTC`
}

/**
 * The owner's notice of a change of their ways in, from its templates: what changed, when, from
 * which address and client. It carries no link and no token: the reader acts, if at all, by going
 * to the service themselves.
 */
export const composeNotice = (
  templates: MailTemplates,
  context: MailContext,
  email: string,
  notice: SecurityNotice
): MailMessage => {
  const wording = noticeWording[notice.kind]
  return render(templates["security-notice"], email, {
    change: wording.change(notice.subject),
    summary: wording.summary,
    when: whenOf(notice.occurred_at),
    ip_address: oneLine(notice.ip_address ?? "") || "unknown",
    client: oneLine(notice.user_agent ?? "") || "unknown",
    product: context.product,
    email
  })
}

/** The built-in templates with a deployment's replacements in place. */
export const withReplacements = (builtIn: MailTemplates, replacements: MailTemplateReplacements): MailTemplates => ({
  "verify-email": { ...builtIn["verify-email"], ...replacements["verify-email"] },
  "reset-password": { ...builtIn["reset-password"], ...replacements["reset-password"] },
  "confirm-email": { ...builtIn["confirm-email"], ...replacements["confirm-email"] },
  "approve-email-change": { ...builtIn["approve-email-change"], ...replacements["approve-email-change"] },
  "undo-email-change": { ...builtIn["undo-email-change"], ...replacements["undo-email-change"] },
  "sign-in": { ...builtIn["sign-in"], ...replacements["sign-in"] },
  "security-notice": { ...builtIn["security-notice"], ...replacements["security-notice"] }
})
