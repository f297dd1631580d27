import { Option, Redacted } from "effect"
import * as F from "../forms.js"
import { PREFIX, type SettingsReader } from "../reader.js"

/** How the verification and reset mails go out: SMTP, the log, or not at all. */
export const readMail = (read: SettingsReader) => {
  const smtpUrl = read
    .optional("SMTP_URL", F.url("smtp:", "smtps:"), {
      secret: true,
      doc: "The SMTP server for the verification and reset mails (`smtp://user:password@host:587`, `smtps://\u2026`)."
    })
    .pipe(Option.map((value) => Redacted.make(value.href)))
  const mailer = read.optional("MAILER", F.oneOf("smtp", "console"), {
    doc: "`console` writes mails, tokens included, to the log instead (local development); `smtp` requires SMTP_URL. Unset: SMTP when SMTP_URL is set, else mails are dropped with a start-up warning."
  })
  if (Option.contains(mailer, "smtp") && Option.isNone(smtpUrl)) {
    read.problem(`${PREFIX}MAILER=smtp needs ${PREFIX}SMTP_URL; expected smtp://… or smtps://…`)
  }
  return {
    smtpUrl,
    mailFrom: read.setting("MAIL_FROM", F.text, "no-reply@localhost", { doc: "The mails' sender address." }),
    mailer
  }
}

export type MailSettings = ReturnType<typeof readMail>
