import { DateTime, Effect, FiberSet, Layer, Option, Schema } from "effect"
import { Events } from "../../application/ports/Events.js"
import { Mailer } from "../../application/ports/Mailer.js"
import type { EventHandlers } from "../../config/Deployment.js"
import { AuthEvent } from "../../domain/Events.js"
import {
  composeAddressChangeMail,
  composeMail,
  composeNotice,
  composeSignInMail,
  type MailContext,
  type MailPurpose,
  type MailTemplates
} from "../../domain/Mail.js"
import { PublicUser } from "../../domain/User.js"

const encodeUser = Schema.encodeSync(PublicUser)

/** The spec's arguments of an event, in order, as a handler receives them. */
const argumentsOf: (event: AuthEvent) => ReadonlyArray<unknown> = AuthEvent.$match({
  after_register: ({ user }) => [encodeUser(user)],
  after_login: ({ user }) => [encodeUser(user)],
  after_logout: ({ user }) => [encodeUser(user)],
  after_password_change: ({ user }) => [encodeUser(user)],
  after_password_reset: ({ user }) => [encodeUser(user)],
  after_email_verify: ({ user }) => [encodeUser(user)],
  after_oauth_login: ({ user, provider, is_new_user }) => [encodeUser(user), provider, is_new_user],
  after_oauth_register: ({ user, user_info }) => [encodeUser(user), user_info],
  after_oauth_link: ({ user, provider }) => [encodeUser(user), provider],
  after_oauth_unlink: ({ user, provider }) => [encodeUser(user), provider],
  send_verification_email: ({ email, token }) => [email, token],
  send_password_reset_email: ({ email, token }) => [email, token],
  send_sign_in_email: ({ email, token, code, sign_up, authorization_request }) => [
    email,
    token,
    code,
    sign_up,
    authorization_request ?? null
  ],
  send_email_change_email: ({ email, token }) => [email, token],
  send_email_change_approval_email: ({ email, token, new_email }) => [email, token, new_email],
  send_email_change_undo_email: ({ email, token, new_email }) => [email, token, new_email],
  send_security_notice: ({ email, notice }) => [
    email,
    { ...notice, occurred_at: DateTime.formatIso(notice.occurred_at) }
  ]
})

/** The mail each token-carrying send event asks for. */
const mailPurposeOf = {
  send_verification_email: "verify-email",
  send_password_reset_email: "reset-password",
  send_email_change_email: "confirm-email"
} as const satisfies Record<string, MailPurpose>

export interface EventsOptions {
  readonly handlers: EventHandlers
  /** The templates of the mails: the built-in ones with the deployment's replacements. */
  readonly templates: MailTemplates
  /** Base of the links in mails, and the product they name. */
  readonly mail: MailContext
}

/**
 * Runs the deployment's handler for each event in the background of the service, and gives the
 * send events (the two token mails, the security notice) to the Mailer when one is provided and
 * the deployment has no handler of its own for them. Without either, a send event's token is
 * dropped (start-up warns about it), and so is a notice.
 * Background fibers belong to the layer's scope: they end with the service.
 */
export const make = (options: EventsOptions) =>
  Effect.gen(function* () {
    const mailer = yield* Effect.serviceOption(Mailer)
    const running = yield* FiberSet.make()

    /** What receives the event, if anything does: the deployment's handler, else the mailer for a send event. */
    const deliveryOf = (event: AuthEvent): Effect.Effect<void, unknown> | undefined => {
      const handler = options.handlers[event._tag] as
        | ((...args: ReadonlyArray<unknown>) => void | Promise<void>)
        | undefined
      if (handler !== undefined) {
        return Effect.tryPromise({ try: async () => handler(...argumentsOf(event)), catch: (error) => error })
      }
      if (Option.isNone(mailer)) return undefined
      switch (event._tag) {
        case "send_verification_email":
        case "send_password_reset_email":
        case "send_email_change_email":
          return mailer.value.send(
            composeMail(options.templates, options.mail, mailPurposeOf[event._tag], event.email, event.token)
          )
        case "send_email_change_approval_email":
          return mailer.value.send(
            composeAddressChangeMail(options.templates, options.mail, "approve-email-change", event)
          )
        case "send_email_change_undo_email":
          return mailer.value.send(
            composeAddressChangeMail(options.templates, options.mail, "undo-email-change", event)
          )
        case "send_sign_in_email":
          return mailer.value.send(composeSignInMail(options.templates, options.mail, event))
        case "send_security_notice":
          return mailer.value.send(composeNotice(options.templates, options.mail, event.email, event.notice))
        default:
          return undefined
      }
    }

    return Events.of({
      // An event nothing receives (the default: no handlers, no mailer) is done with at once.
      emit: (event) =>
        Effect.suspend(() => {
          const delivery = deliveryOf(event)
          return delivery === undefined
            ? Effect.void
            : FiberSet.run(
                running,
                delivery.pipe(
                  Effect.catchAllCause((cause) => Effect.logError(`the ${event._tag} handler failed`, cause))
                )
              ).pipe(Effect.asVoid)
        })
    })
  })

export const layer = (options: EventsOptions) => Layer.scoped(Events, make(options))
