import { Context, type DateTime, type Effect } from "effect"
import type { MailMessage } from "../../domain/Mail.js"

/** A mail the development inbox kept, as it would have been sent. */
export interface KeptMail extends MailMessage {
  readonly id: number
  readonly at: DateTime.Utc
}

/**
 * The development inbox (MAILER=dev): the mails of this process, newest first, the last few
 * only. Memory, for a laptop: nothing is sent and nothing outlives the process.
 */
export class DevInbox extends Context.Tag("app/DevInbox")<
  DevInbox,
  { readonly mails: Effect.Effect<ReadonlyArray<KeptMail>> }
>() {}
