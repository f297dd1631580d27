import { Effect, Layer } from "effect"
import { Mailer } from "../../application/ports/Mailer.js"

/**
 * MAILER=console: every message is written to the log instead of being sent, tokens included,
 * for local development. Never for production. The text part only: the HTML one says the same.
 */
export const layer = Layer.succeed(
  Mailer,
  Mailer.of({
    send: (message) =>
      Effect.logInfo("mail (MAILER=console, not sent)", {
        to: message.to,
        subject: message.subject,
        text: message.text
      })
  })
)
