import { Context, DateTime, Effect, Layer, Ref } from "effect"
import { DevInbox, type KeptMail } from "../../application/ports/DevInbox.js"
import { Mailer } from "../../application/ports/Mailer.js"

/** How many mails the inbox keeps: a development session's worth, in bounded memory. */
export const KEPT = 100

/**
 * MAILER=dev: every mail is kept in this process's memory instead of being sent, and shown at
 * /dev/inbox (interfaces/http/devInbox.ts) to this machine's browsers. Tokens included: for a
 * laptop, never for production.
 */
export const layer = Layer.effectContext(
  Effect.gen(function* () {
    const kept = yield* Ref.make<{ readonly next: number; readonly mails: ReadonlyArray<KeptMail> }>({
      next: 1,
      mails: []
    })
    const mailer = Mailer.of({
      send: (message) =>
        Effect.flatMap(DateTime.now, (at) =>
          Ref.update(kept, ({ next, mails }) => ({
            next: next + 1,
            mails: [{ ...message, id: next, at }, ...mails].slice(0, KEPT)
          }))
        )
    })
    const inbox = DevInbox.of({ mails: Effect.map(Ref.get(kept), ({ mails }) => mails) })
    return Context.make(Mailer, mailer).pipe(Context.add(DevInbox, inbox))
  })
)

/** No development inbox: another mailer sends, or none; its page is not served. */
export const noInbox = Layer.succeed(DevInbox, DevInbox.of({ mails: Effect.succeed([]) }))
