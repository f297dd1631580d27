import { describe, expect, it } from "@effect/vitest"
import { DateTime, Effect, Layer, Logger, Schedule, Supervisor } from "effect"
import { Events } from "../../application/ports/Events.js"
import { MailError, Mailer } from "../../application/ports/Mailer.js"
import type { EventHandlers } from "../../config/Deployment.js"
import { AuthEvent } from "../../domain/Events.js"
import type { MailMessage } from "../../domain/Mail.js"
import { Email, type PublicUser, UserId } from "../../domain/User.js"
import * as EventsInProcess from "../../infrastructure/events/EventsInProcess.js"
import { builtInTemplates } from "../../infrastructure/mail/templates.js"

const publicUrl = new URL("https://auth.example.com/app")
const user: PublicUser = {
  id: UserId.make("u-1"),
  email: Email.make("alice@example.com"),
  is_active: true,
  is_verified: false,
  is_superuser: false,
  created_at: DateTime.unsafeMake("2026-01-02T03:04:05.000Z"),
  roles: []
}

/** Polls until `check` holds, for work that runs in the background of the adapter. */
const eventually = (check: () => boolean) =>
  Effect.suspend(() => (check() ? Effect.void : Effect.fail("not yet"))).pipe(
    Effect.retry(Schedule.spaced("10 millis").pipe(Schedule.upTo("2 seconds"))),
    Effect.orDie
  )

const recordingMailer = (sent: Array<MailMessage>) =>
  Layer.succeed(Mailer, Mailer.of({ send: (message) => Effect.sync(() => void sent.push(message)) }))

const run = <A>(handlers: EventHandlers, body: Effect.Effect<A, unknown, Events>, mailer?: Layer.Layer<Mailer>) => {
  const events = EventsInProcess.layer({
    handlers,
    templates: builtInTemplates,
    mail: { publicUrl, product: "Portcullis" }
  })
  return body.pipe(Effect.provide(mailer === undefined ? events : events.pipe(Layer.provide(mailer))), Effect.scoped)
}

/** Counts the fibers started under it, ended or not. */
class StartCounter extends Supervisor.AbstractSupervisor<number> {
  started = 0
  get value() {
    return Effect.sync(() => this.started)
  }
  override onStart() {
    this.started++
  }
}

const everyEvent: ReadonlyArray<AuthEvent> = [
  AuthEvent.after_register({ user }),
  AuthEvent.after_login({ user }),
  AuthEvent.after_logout({ user }),
  AuthEvent.after_password_change({ user }),
  AuthEvent.after_password_reset({ user }),
  AuthEvent.after_email_verify({ user }),
  AuthEvent.after_oauth_login({ user, provider: "github", is_new_user: false }),
  AuthEvent.after_oauth_register({ user, user_info: {} }),
  AuthEvent.after_oauth_link({ user, provider: "github" }),
  AuthEvent.after_oauth_unlink({ user, provider: "github" }),
  AuthEvent.send_verification_email({ email: "a@example.com", token: "t" }),
  AuthEvent.send_password_reset_email({ email: "a@example.com", token: "t" }),
  AuthEvent.send_security_notice({
    email: "a@example.com",
    notice: {
      kind: "password_changed",
      subject: "",
      occurred_at: DateTime.unsafeMake("2026-01-02T03:04:05.000Z"),
      ip_address: null,
      user_agent: null
    }
  })
]

const passkeyNotice = AuthEvent.send_security_notice({
  email: "alice@example.com",
  notice: {
    kind: "passkey_added",
    subject: "MacBook",
    occurred_at: DateTime.unsafeMake("2026-01-02T03:04:05.000Z"),
    ip_address: "203.0.113.7",
    user_agent: "Firefox/140.0"
  }
})

/** How many fibers emitting `events` starts. */
const fibersStartedBy = (events: ReadonlyArray<AuthEvent>) =>
  Effect.gen(function* () {
    const counter = new StartCounter()
    const port = yield* Events
    yield* Effect.forEach(events, port.emit, { discard: true }).pipe(Effect.supervised(counter))
    return counter.started
  })

describe("in-process events", () => {
  it.live("an event nothing receives starts no fiber; one with a receiver starts one", () => {
    const sent: Array<MailMessage> = []
    return Effect.gen(function* () {
      expect(yield* run({}, fibersStartedBy(everyEvent))).toBe(0)
      expect(yield* run({ after_login: () => undefined }, fibersStartedBy(everyEvent))).toBe(1)
      // With a mailer, the three send events are received and nothing else.
      expect(yield* run({}, fibersStartedBy(everyEvent), recordingMailer(sent))).toBe(3)
    })
  })

  it.live("calls a handler with the spec's arguments in order, the user as its JSON object", () => {
    const calls: Array<ReadonlyArray<unknown>> = []
    return run(
      { after_oauth_login: (...args) => void calls.push(args) },
      Effect.gen(function* () {
        const events = yield* Events
        yield* events.emit(AuthEvent.after_oauth_login({ user, provider: "github", is_new_user: true }))
        yield* eventually(() => calls.length === 1)
        expect(calls[0]).toEqual([{ ...user, created_at: "2026-01-02T03:04:05.000Z" }, "github", true])
      })
    )
  })

  it.live("logs a handler that throws or rejects, and emitting still succeeds", () => {
    const logged: Array<string> = []
    const logger = Logger.replace(
      Logger.defaultLogger,
      Logger.make(({ message }) => void logged.push(String(Array.isArray(message) ? message[0] : message)))
    )
    return run(
      {
        after_login: () => {
          throw new Error("handler bug")
        },
        after_logout: () => Promise.reject(new Error("webhook down"))
      },
      Effect.gen(function* () {
        const events = yield* Events
        yield* events.emit(AuthEvent.after_login({ user }))
        yield* events.emit(AuthEvent.after_logout({ user }))
        yield* eventually(() => logged.length === 2)
        expect(logged.sort()).toEqual(["the after_login handler failed", "the after_logout handler failed"])
      })
    ).pipe(Effect.provide(logger))
  })

  it.live("gives send events to the mailer with the link under PUBLIC_URL and the bare token", () => {
    const sent: Array<MailMessage> = []
    return run(
      {},
      Effect.gen(function* () {
        const events = yield* Events
        yield* events.emit(AuthEvent.send_verification_email({ email: "alice@example.com", token: "tok.en-1" }))
        yield* events.emit(AuthEvent.send_password_reset_email({ email: "alice@example.com", token: "tok.en-2" }))
        yield* eventually(() => sent.length === 2)
        const [verify, reset] = [...sent].sort((a, b) => a.subject.localeCompare(b.subject))
        expect(verify?.text).toContain("https://auth.example.com/app/verify-email?token=tok.en-1")
        expect(verify?.text.split("\n")).toContain("tok.en-1")
        expect(reset?.text).toContain("https://auth.example.com/app/reset-password?token=tok.en-2")
        expect(reset?.text.split("\n")).toContain("tok.en-2")
        expect(sent.every((message) => message.to === "alice@example.com")).toBe(true)
      }),
      recordingMailer(sent)
    )
  })

  it.live("a deployment's own send handler replaces the mailer for that event only", () => {
    const sent: Array<MailMessage> = []
    const handled: Array<ReadonlyArray<unknown>> = []
    return run(
      { send_password_reset_email: (...args) => void handled.push(args) },
      Effect.gen(function* () {
        const events = yield* Events
        yield* events.emit(AuthEvent.send_password_reset_email({ email: "a@example.com", token: "t1" }))
        yield* events.emit(AuthEvent.send_verification_email({ email: "a@example.com", token: "t2" }))
        yield* eventually(() => handled.length === 1 && sent.length === 1)
        expect(handled[0]).toEqual(["a@example.com", "t1"])
        expect(sent[0]?.subject).toBe("Confirm your email address for Portcullis")
      }),
      recordingMailer(sent)
    )
  })

  it.live("gives a security notice to the mailer: the change, when, from where, and no link", () => {
    const sent: Array<MailMessage> = []
    return run(
      {},
      Effect.gen(function* () {
        const events = yield* Events
        yield* events.emit(passkeyNotice)
        yield* eventually(() => sent.length === 1)
        expect(sent[0]?.to).toBe("alice@example.com")
        expect(sent[0]?.subject).toBe("Security notice for Portcullis: A passkey was added to your account")
        expect(sent[0]?.text).toContain("A passkey named \u201cMacBook\u201d was added to your account.")
        expect(sent[0]?.text).toContain(
          "When: 2026-01-02 03:04:05 UTC\nIP address: 203.0.113.7\nClient: Firefox/140.0\n"
        )
        expect(sent[0]?.html).toContain("A passkey named \u201cMacBook\u201d was added to your account.")
        expect(sent[0]?.text).not.toContain("auth.example.com")
      }),
      recordingMailer(sent)
    )
  })

  it.live("a deployment's notice handler gets the address and the notice as JSON, and no notice is mailed", () => {
    const sent: Array<MailMessage> = []
    const handled: Array<ReadonlyArray<unknown>> = []
    return run(
      { send_security_notice: (...args) => void handled.push(args) },
      Effect.gen(function* () {
        const events = yield* Events
        yield* events.emit(passkeyNotice)
        yield* events.emit(AuthEvent.send_verification_email({ email: "alice@example.com", token: "t" }))
        yield* eventually(() => handled.length === 1 && sent.length === 1)
        expect(handled[0]).toEqual([
          "alice@example.com",
          {
            kind: "passkey_added",
            subject: "MacBook",
            occurred_at: "2026-01-02T03:04:05.000Z",
            ip_address: "203.0.113.7",
            user_agent: "Firefox/140.0"
          }
        ])
        expect(JSON.parse(JSON.stringify(handled[0]?.[1]))).toEqual(handled[0]?.[1])
        // Only the verification mail went to the mailer.
        expect(sent.map((message) => message.subject)).toEqual(["Confirm your email address for Portcullis"])
      }),
      recordingMailer(sent)
    )
  })

  it.live("a mailer failure is logged, never raised", () => {
    const logged: Array<unknown> = []
    const failing = Layer.succeed(Mailer, Mailer.of({ send: () => Effect.fail(new MailError({ message: "refused" })) }))
    const logger = Logger.replace(
      Logger.defaultLogger,
      Logger.make(({ message }) => void logged.push(message))
    )
    return run(
      {},
      Effect.gen(function* () {
        const events = yield* Events
        yield* events.emit(AuthEvent.send_verification_email({ email: "a@example.com", token: "t" }))
        yield* eventually(() => logged.length === 1)
      }),
      failing
    ).pipe(Effect.provide(logger))
  })
})
