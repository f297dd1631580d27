import { Context, type Effect, Schema } from "effect"
import type { MailMessage } from "../../domain/Mail.js"

export class MailError extends Schema.TaggedError<MailError>()("MailError", { message: Schema.String }) {}

/** Sends one message. */
export class Mailer extends Context.Tag("app/Mailer")<
  Mailer,
  { readonly send: (message: MailMessage) => Effect.Effect<void, MailError> }
>() {}
