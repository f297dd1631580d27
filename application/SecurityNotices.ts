import { DateTime, Effect, Option } from "effect"
import { AuthEvent } from "../domain/Events.js"
import type { NoticeKind } from "../domain/SecurityNotice.js"
import { noticeOf, type WayInChange } from "../domain/WaysIn.js"
import { RequestContext } from "./Audit.js"
import { AuthPolicy } from "./AuthPolicy.js"
import { Events } from "./ports/Events.js"
import { Webhooks } from "./Webhooks.js"

/** What a notice says: what happened, and to what (a provider's name, an address). */
export interface Notice {
  readonly kind: NoticeKind
  readonly subject: string
}

/**
 * The owner's notices of changes to their ways in, and of attempts (SECURITY_NOTICES): sent as
 * the `send_security_notice` event, whose webhook messages commit with the change they tell of.
 */
export class SecurityNotices extends Effect.Service<SecurityNotices>()("app/SecurityNotices", {
  effect: Effect.gen(function* () {
    const webhooks = yield* Webhooks
    const events = yield* Events
    const { accounts: rules } = yield* AuthPolicy

    /** The notice to `email` of a change or an attempt, as an event: none when notices are off. */
    const noticeEvent = (email: string, notice: Notice | null) =>
      Effect.gen(function* () {
        if (!rules.securityNotices || notice === null) return Option.none<AuthEvent>()
        const { client } = yield* RequestContext
        return Option.some(
          AuthEvent.send_security_notice({ email, notice: { ...notice, occurred_at: yield* DateTime.now, ...client } })
        )
      })

    const published = (notice: Option.Option<AuthEvent>) =>
      Option.match(notice, { onNone: () => Effect.void, onSome: webhooks.publishEvent })

    /**
     * The owner's notice of a change, its webhook messages written: inside the change's
     * transaction, so that they commit with it. Its handlers are told once it has (`told`).
     */
    const announce = (email: string, change: WayInChange) => announceNotice(email, noticeOf(change))

    /** As `announce`, for a notice of something that is no way in (an app let in). */
    const announceNotice = (email: string, notice: Notice | null) => Effect.tap(noticeEvent(email, notice), published)

    /** A notice announced inside a transaction, given to its handlers once the transaction committed. */
    const told = (notice: Option.Option<AuthEvent>) =>
      Option.match(notice, { onNone: () => Effect.void, onSome: events.emit })

    /** A notice to `email` of an attempt, which changed nothing: its webhook messages written, and told. */
    const tell = (email: string, notice: Notice | null) =>
      Effect.flatMap(noticeEvent(email, notice), (event) => Effect.zipRight(published(event), told(event)))

    return { announce, announceNotice, told, tell } as const
  })
}) {}
