import { Effect, Schedule } from "effect"
import type { EventHandlers, UserJson } from "../../config/Deployment.js"

/**
 * What a deployment's event handlers received, recorded per event name. Handlers run after the
 * response, so tests wait for an entry instead of expecting it at once.
 */
export const makeOutbox = () => {
  const received: Array<{ readonly event: string; readonly args: ReadonlyArray<unknown> }> = []
  const record =
    (event: string) =>
    (...args: ReadonlyArray<unknown>) => {
      received.push({ event, args })
    }
  const handlers = {
    after_register: record("after_register"),
    after_login: record("after_login"),
    after_logout: record("after_logout"),
    after_password_change: record("after_password_change"),
    after_password_reset: record("after_password_reset"),
    after_email_verify: record("after_email_verify"),
    send_verification_email: record("send_verification_email"),
    send_password_reset_email: record("send_password_reset_email"),
    send_security_notice: record("send_security_notice"),
    send_sign_in_email: record("send_sign_in_email"),
    send_email_change_email: record("send_email_change_email"),
    send_email_change_approval_email: record("send_email_change_approval_email"),
    send_email_change_undo_email: record("send_email_change_undo_email"),
    after_oauth_login: record("after_oauth_login"),
    after_oauth_register: record("after_oauth_register"),
    after_oauth_link: record("after_oauth_link"),
    after_oauth_unlink: record("after_oauth_unlink")
  } satisfies EventHandlers

  const find = (event: string, email: string) =>
    received.filter(
      (entry) =>
        entry.event === event && (entry.args[0] === email || (entry.args[0] as UserJson | undefined)?.email === email)
    )

  /** Waits (up to 2 s) for the n-th delivery of `event` concerning `email`. */
  const next = (event: string, email: string, n = 1) =>
    Effect.suspend(() => {
      const found = find(event, email)
      return found.length >= n ? Effect.succeed(found[n - 1]?.args ?? []) : Effect.fail("not yet" as const)
    }).pipe(
      Effect.retry(Schedule.spaced("20 millis").pipe(Schedule.upTo("2 seconds"))),
      Effect.orElse(() => Effect.dieMessage(`no ${event} #${n} for ${email}`))
    )

  /** The token of the n-th send event for `email`. */
  const token = (
    event:
      | "send_verification_email"
      | "send_password_reset_email"
      | "send_email_change_email"
      | "send_email_change_approval_email"
      | "send_email_change_undo_email",
    email: string,
    n = 1
  ) => Effect.map(next(event, email, n), (args) => String(args[1]))

  /** The link's token, the code and whether it signs up, of the n-th sign-in mail for `email`. */
  const signInMail = (email: string, n = 1) =>
    Effect.map(next("send_sign_in_email", email, n), (args) => ({
      token: String(args[1]),
      code: String(args[2]),
      signUp: args[3] === true,
      /** The authorization request the link resumes, when asked from the provider's sign-in page. */
      authorizationRequest: args[4] === undefined || args[4] === null ? null : String(args[4])
    }))

  /** How many deliveries of `event` concern `email`, after letting pending handlers run. */
  const count = (event: string, email: string) =>
    Effect.sleep("150 millis").pipe(Effect.map(() => find(event, email).length))

  return { handlers, next, token, signInMail, count }
}
