import { readdirSync, readFileSync } from "node:fs"
import { join, resolve } from "node:path"
import { Option, Redacted } from "effect"
import { type MailTemplate, type MailTemplateReplacements, templateFaults, templateNames } from "../../domain/Mail.js"
import * as F from "../forms.js"
import { PREFIX, type SettingsReader } from "../reader.js"

const parts = ["text", "html"] as const satisfies ReadonlyArray<keyof MailTemplate>
const extension = { text: "txt", html: "html" } as const
const templateFiles = templateNames.flatMap((mail) =>
  parts.map((part) => ({ mail, part, file: `${mail}.${extension[part]}` }))
)
const expectedFiles = `a folder holding any of ${templateFiles.map(({ file }) => file).join(", ")}`

const reason = (error: unknown) =>
  error instanceof Error && "code" in error
    ? String(error.code)
    : error instanceof Error
      ? error.message
      : String(error)

/**
 * The templates of MAIL_TEMPLATES_DIR, each replacing its built-in one; a template it lacks keeps
 * the built-in one. A folder that cannot be read, a template that cannot be read or is unusable,
 * or a `.txt`/`.html` file whose name is not a template's (a typo would otherwise be ignored
 * silently) is a start-up problem, one line each.
 */
const readTemplates = (read: SettingsReader, folder: string): MailTemplateReplacements => {
  const variable = `${PREFIX}MAIL_TEMPLATES_DIR`
  let entries: ReadonlyArray<string>
  try {
    entries = readdirSync(resolve(folder))
  } catch (error) {
    read.problem(`${variable}=${JSON.stringify(folder)} cannot be read (${reason(error)}); expected ${expectedFiles}`)
    return {}
  }
  const known = new Set(templateFiles.map(({ file }) => file))
  for (const entry of entries) {
    if (/\.(txt|html)$/.test(entry) && !known.has(entry)) {
      read.problem(`${variable}: ${entry} is not a template's name; expected ${expectedFiles}`)
    }
  }
  const found = templateFiles.filter(({ file }) => entries.includes(file))
  if (found.length === 0)
    read.problem(`${variable}=${JSON.stringify(folder)} holds no template; expected ${expectedFiles}`)
  const replacements: Record<string, Record<string, string>> = {}
  for (const { mail, part, file } of found) {
    let template: string
    try {
      template = readFileSync(join(resolve(folder), file), "utf8")
    } catch (error) {
      read.problem(`${variable}: ${file} cannot be read (${reason(error)})`)
      continue
    }
    const faults = templateFaults(mail, part, template)
    for (const fault of faults) read.problem(`${variable}: ${file} ${fault}`)
    if (faults.length === 0) replacements[mail] = { ...replacements[mail], [part]: template }
  }
  return replacements
}

/** How the verification and reset mails and the security notices go out: SMTP, the log, or not at all; and what they say. */
export const readMail = (read: SettingsReader) => {
  const smtpUrl = read
    .optional("SMTP_URL", F.url("smtp:", "smtps:"), {
      secret: true,
      doc: "The SMTP server for the verification and reset mails and the security notices (`smtp://user:password@host:587`, `smtps://\u2026`)."
    })
    .pipe(Option.map((value) => Redacted.make(value.href)))
  const mailer = read.optional("MAILER", F.oneOf("smtp", "console", "dev"), {
    doc: "`dev` keeps mails, tokens included, in the process's memory and shows them at `/dev/inbox` to this machine's browsers (local development); `console` prints them on stderr as readable text instead (the log says only to whom and about what); `smtp` requires SMTP_URL. Unset: SMTP when SMTP_URL is set, else `dev` when one process (WORKERS=1) listens on a loopback address (HOST) and PUBLIC_URL names one too, else mails are dropped with a start-up warning. With several workers each keeps its own mails."
  })
  if (Option.contains(mailer, "smtp") && Option.isNone(smtpUrl)) {
    read.problem(`${PREFIX}MAILER=smtp needs ${PREFIX}SMTP_URL; expected smtp://… or smtps://…`)
  }
  const mailTemplatesDir = read.optional("MAIL_TEMPLATES_DIR", F.text, {
    doc: "A folder whose templates replace the built-in mails, file by file: `verify-email.txt`, `verify-email.html`, `reset-password.txt`, `reset-password.html`, `confirm-email.txt`, `confirm-email.html` (placeholders `{{link}}`, `{{token}}`, `{{product}}`, `{{email}}`; each names `{{link}}` or `{{token}}`), `approve-email-change.txt`, `approve-email-change.html`, `undo-email-change.txt`, `undo-email-change.html` (the same and `{{new_email}}`), `sign-in.txt`, `sign-in.html` (the same and `{{code}}`; each names `{{link}}` or `{{code}}`), `security-notice.txt`, `security-notice.html` (placeholders `{{change}}`, `{{summary}}`, `{{when}}`, `{{ip_address}}`, `{{client}}`, `{{product}}`, `{{email}}`; each names `{{change}}`). A text template starts with a `Subject:` line. Read once at start-up; a fault in it stops start-up."
  })
  return {
    smtpUrl,
    mailFrom: read.setting("MAIL_FROM", F.text, "no-reply@localhost", { doc: "The mails' sender address." }),
    mailer,
    mailTemplatesDir,
    /** The templates MAIL_TEMPLATES_DIR replaces, read once at start-up. */
    mailTemplates: Option.match(mailTemplatesDir, { onNone: () => ({}), onSome: (dir) => readTemplates(read, dir) })
  }
}

export type MailSettings = ReturnType<typeof readMail>
