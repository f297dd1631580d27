import { randomUUID } from "node:crypto"
import { describe, expect, layer } from "@effect/vitest"
import * as argon2 from "@node-rs/argon2"
import { Effect, Option } from "effect"
import { AuditLog } from "../../application/ports/AuditLog.js"
import { UserRepo } from "../../application/ports/UserRepo.js"
import type { EventHandlers } from "../../config/Deployment.js"
import { Email, normaliseEmail } from "../../domain/User.js"
import { call, expectProblem, me, password, register, signIn, signUp } from "../support/flows.js"
import { makeOutbox } from "../support/Outbox.js"
import { appWithProviders, person, through } from "../support/oauthFlows.js"
import * as TestApp from "../support/TestApp.js"

/**
 * An address must not look like another (docs/behaviour.md, "Emails"): wherever one enters
 * over HTTP (registration, sign-up by mail, address change) an invisible, bidirectional or
 * control character, or Latin mixed with Cyrillic or Greek, is a 422 naming the field that never
 * echoes the address, and nothing is stored or mailed; a provider's such email is no email. An
 * account stored before the rule still signs in.
 */

const hex = (char: string) => `U+${(char.codePointAt(0) ?? 0).toString(16).toUpperCase().padStart(4, "0")}`

const invisible = /^must not contain invisible characters/
const bidirectional = /^must not contain bidirectional controls/

/** Each class of look-alike: its name, an address of it holding `probe`, and the rule a refusal names. */
const lookAlikes: ReadonlyArray<readonly [string, (probe: string) => string, RegExp]> = [
  ...["\u200B", "\u200D", "\u2060", "\u00AD", "\uFEFF"].map(
    (char) => [hex(char), (probe: string) => `${probe}${char}pal@example.com`, invisible] as const
  ),
  ...["\u202A", "\u202B", "\u202C", "\u202D", "\u202E", "\u2066", "\u2067", "\u2068", "\u2069", "\u200E", "\u200F"].map(
    (char) => [hex(char), (probe: string) => `${probe}${char}@example.com`, bidirectional] as const
  ),
  ["a C1 control (U+0085)", (probe) => `${probe}\u0085@example.com`, /^must not contain control characters/],
  ["a Cyrillic а among Latin letters", (probe) => `${probe}-p\u0430ypal@example.com`, /^must not mix Latin/],
  ["a Greek ο in a Latin domain label", (probe) => `${probe}@g\u03BFogle.com`, /^must not mix Latin/],
  ["an xn-- label decoding to mixed scripts", (probe) => `${probe}@xn--pypal-4ve.com`, /^must not mix Latin/],
  ["an xn-- label that does not decode", (probe) => `${probe}@xn--abc-.com`, /^must not have an xn-- domain label/]
]

/** A test's own marker: every look-alike it sends holds it, so no reply and no event may. */
const newProbe = () => `probe${randomUUID().slice(0, 8)}`

/** The outbox's handlers, also remembering every event's arguments as JSON. */
const recording = () => {
  const outbox = makeOutbox()
  const seen: Array<string> = []
  const handlers: EventHandlers = Object.fromEntries(
    Object.entries(outbox.handlers).map(([event, record]) => [
      event,
      (...args: ReadonlyArray<unknown>) => {
        seen.push(JSON.stringify([event, ...args]))
        record(...args)
      }
    ])
  )
  /** The events that mention `probe`, once the pending handlers ran. */
  const mentioning = (probe: string) =>
    Effect.sleep("150 millis").pipe(Effect.map(() => seen.filter((entry) => entry.includes(probe))))
  return { handlers, mentioning }
}

/** Sends each look-alike through `send`, and checks the 422 names `field` and the rule, not the address. */
const refusesEach = (field: string, send: (address: string) => Effect.Effect<TestApp.Reply, never, TestApp.TestApp>) =>
  Effect.gen(function* () {
    const probe = newProbe()
    for (const [name, make, rule] of lookAlikes) {
      const reply = yield* send(make(probe))
      const problem = expectProblem(reply, 422, "ValidationError")
      expect(problem.errors, name).toEqual([{ path: field, message: expect.stringMatching(rule) }])
      expect(reply.text, name).not.toContain(probe)
    }
    return probe
  })

const env = { SERVICE_EMAIL_SIGN_IN_ENABLED: "true", SERVICE_EMAIL_SIGN_UP_ENABLED: "true" }

for (const backend of TestApp.backendsWithFile()) {
  describe(`addresses that look like another (${backend.name})`, () => {
    const events = recording()
    layer(TestApp.layer(backend, env, { deployment: { events: events.handlers } }), { excludeTestServices: true })(
      (it) => {
        it.effect("registration refuses each class with 422 naming email; no account is made, nothing mailed", () =>
          Effect.gen(function* () {
            const probe = yield* refusesEach("email", (address) => register(address))
            const users = yield* UserRepo
            for (const [name, make] of lookAlikes) {
              const stored = yield* users.findByLogin("email", normaliseEmail(make(probe)))
              expect(Option.isNone(stored), name).toBe(true)
            }
            expect(yield* events.mentioning(probe)).toEqual([])
          })
        )

        it.effect("sign-up by mail refuses each class with 422 naming email; no mail goes out", () =>
          Effect.gen(function* () {
            const probe = yield* refusesEach("email", (address) =>
              call("POST", "/email-sign-in/request", { json: { email: address } })
            )
            expect(yield* events.mentioning(probe)).toEqual([])
          })
        )

        it.effect("an address change refuses each class with 422 naming new_email; nobody is told anything", () =>
          Effect.gen(function* () {
            const session = yield* signUp("mover")
            const probe = yield* refusesEach("new_email", (address) =>
              call("POST", "/me/email", { token: session.access, json: { new_email: address } })
            )
            expect(yield* events.mentioning(probe)).toEqual([])
            expect(((yield* me(session.access)).body as { email: string }).email).toBe(session.email)
          })
        )

        it.effect("an account stored with such an address before the rule still signs in with its password", () =>
          Effect.gen(function* () {
            const users = yield* UserRepo
            const hashed = yield* Effect.promise(() => argon2.hash(password))
            const probe = newProbe()
            for (const address of [`${probe}\u200Bpal@example.com`, `${probe}-p\u0430ypal@example.com`]) {
              yield* users.create({
                email: Email.make(address),
                hashed_password: Option.some(hashed),
                is_active: true,
                is_verified: true,
                is_superuser: false
              })
              const session = yield* signIn(address)
              expect(((yield* me(session.access)).body as { email: string }).email).toBe(address)
            }
          })
        )
      }
    )
  })
}

for (const backend of TestApp.backends) {
  describe(`a provider's look-alike email (${backend.name})`, () => {
    layer(appWithProviders(backend), { excludeTestServices: true })((it) => {
      it.effect("counts as no email: the sign-in is refused as one without an email, and nobody is made", () =>
        Effect.gen(function* () {
          const who = person("zero-width")
          const address = (who.email ?? "").replace("@", "\u200B@")
          const reply = yield* through("google", { ...who, email: address })
          expectProblem(reply, 400, "OAuthError")
          expect(reply.text).not.toContain(address)
          const failures = yield* Effect.flatMap(AuditLog, (log) => log.list({ type: "sign_in.failed", limit: 1 }))
          expect(failures[0]?.details).toMatchObject({ method: "oauth", provider: "google", reason: "email_missing" })
          const stored = yield* Effect.flatMap(UserRepo, (users) => users.findByLogin("email", normaliseEmail(address)))
          expect(Option.isNone(stored)).toBe(true)
        })
      )
    })
  })
}
