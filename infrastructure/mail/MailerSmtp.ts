import { Effect, Layer, Redacted } from "effect"
import nodemailer from "nodemailer"
import { MailError, Mailer } from "../../application/ports/Mailer.js"

export interface SmtpOptions {
  /** smtp://user:password@host:port or smtps://…; the credentials stay redacted until here. */
  readonly url: Redacted.Redacted<string>
  readonly from: string
}

/**
 * Mail through an SMTP server (nodemailer): the text and HTML parts as multipart/alternative, with
 * timeouts so a dead server cannot hold a fiber.
 */
export const make = (options: SmtpOptions) =>
  Effect.acquireRelease(
    Effect.sync(() =>
      nodemailer.createTransport({
        url: Redacted.value(options.url),
        connectionTimeout: 10_000,
        greetingTimeout: 10_000,
        socketTimeout: 20_000
      })
    ),
    (transport) => Effect.sync(() => transport.close())
  ).pipe(
    Effect.map((transport) =>
      Mailer.of({
        send: (message) =>
          Effect.tryPromise({
            try: () =>
              transport.sendMail({
                from: options.from,
                to: message.to,
                subject: message.subject,
                text: message.text,
                html: message.html
              }),
            catch: (error) => new MailError({ message: error instanceof Error ? error.message : String(error) })
          }).pipe(Effect.asVoid)
      })
    )
  )

export const layer = (options: SmtpOptions) => Layer.scoped(Mailer, make(options))
