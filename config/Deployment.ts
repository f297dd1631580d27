import { eventNames } from "../domain/Events.js"
import type { PublicUser } from "../domain/User.js"

/** The user as event handlers receive it: the JSON user object of the API. */
export type UserJson = typeof PublicUser.Encoded

type Handler<Args extends ReadonlyArray<unknown>> = (...args: Args) => void | Promise<void>

/**
 * Handlers a deployment registers by event name, called with the spec's arguments in order.
 * They run after the request has been answered; a handler that throws or rejects is logged and
 * changes nothing. A handler for one of the two send events replaces the built-in mailer for it.
 */
export interface EventHandlers {
  readonly after_register?: Handler<[user: UserJson]>
  readonly after_login?: Handler<[user: UserJson]>
  readonly after_logout?: Handler<[user: UserJson]>
  readonly after_password_change?: Handler<[user: UserJson]>
  readonly after_password_reset?: Handler<[user: UserJson]>
  readonly after_email_verify?: Handler<[user: UserJson]>
  readonly after_oauth_login?: Handler<[user: UserJson, provider: string, is_new_user: boolean]>
  readonly after_oauth_register?: Handler<[user: UserJson, user_info: Readonly<Record<string, unknown>>]>
  readonly after_oauth_link?: Handler<[user: UserJson, provider: string]>
  readonly after_oauth_unlink?: Handler<[user: UserJson, provider: string]>
  readonly send_verification_email?: Handler<[email: string, token: string]>
  readonly send_password_reset_email?: Handler<[email: string, token: string]>
}

/** What a deployment supplies in code, beside its SERVICE_ settings. */
export interface Deployment {
  readonly events?: EventHandlers
}

/**
 * Why a value loaded from a deployment module is not a Deployment, one line per problem; empty
 * when it is one. Catches a misspelt event name at start-up instead of a silent no-op.
 */
export const deploymentProblems = (value: unknown): ReadonlyArray<string> => {
  if (typeof value !== "object" || value === null) return ["the module's default export is not an object"]
  const problems: Array<string> = []
  for (const key of Object.keys(value)) {
    if (key !== "events") problems.push(`${key} is not a deployment option (expected: events)`)
  }
  const events: unknown = (value as { events?: unknown }).events
  if (events === undefined) return problems
  if (typeof events !== "object" || events === null) return [...problems, "events is not an object"]
  for (const [name, handler] of Object.entries(events)) {
    if (!(eventNames as ReadonlyArray<string>).includes(name)) {
      problems.push(`events.${name} is not an event (expected one of ${eventNames.join(", ")})`)
    } else if (typeof handler !== "function") {
      problems.push(`events.${name} is not a function`)
    }
  }
  return problems
}
