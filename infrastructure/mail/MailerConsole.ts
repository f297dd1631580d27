import { Effect, Layer } from "effect"
import { Mailer } from "../../application/ports/Mailer.js"
import type { MailMessage } from "../../domain/Mail.js"
import { printable } from "../../domain/Text.js"

/**
 * MAILER=console: every message is printed instead of being sent, tokens included, for local
 * development. Never for production. The text part only (the HTML one says the same), as a person
 * reads a mail in a terminal, on stderr: a log line is one JSON object in the default LOG_FORMAT,
 * where a mail's lines would be one escaped string. The log still says that a mail went, to whom
 * and about what, without its text.
 */

const RULE = "─".repeat(72)

/** The mail as printed: a rule, its headers, its text, a rule, written at once. */
export const readable = (message: MailMessage): string =>
  [
    `┌${RULE}`,
    "  mail, not sent (SERVICE_MAILER=console)",
    `  To:      ${printable(message.to)}`,
    `  Subject: ${printable(message.subject)}`,
    "",
    ...printable(message.text.trimEnd()).split("\n"),
    `└${RULE}`,
    ""
  ].join("\n")

export const make = (write: (text: string) => void) =>
  Mailer.of({
    send: (message) =>
      Effect.sync(() => write(readable(message))).pipe(
        Effect.zipRight(
          Effect.logInfo("mail printed on stderr, not sent (SERVICE_MAILER=console)", {
            to: message.to,
            subject: message.subject
          })
        )
      )
  })

export const layer = Layer.succeed(
  Mailer,
  make((text) => process.stderr.write(text))
)
