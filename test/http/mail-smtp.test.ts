import { afterAll, describe, expect, layer } from "@effect/vitest"
import { Effect, Schedule } from "effect"
import { call, expectProblem, login, register, uniqueEmail } from "../support/flows.js"
import { type ReceivedMail, startSmtpSink } from "../support/SmtpSink.js"
import * as TestApp from "../support/TestApp.js"

const sink = await startSmtpSink()
afterAll(() => sink.close())

/** Waits for the n-th mail to `to` with this subject. */
const mailTo = (to: string, subject: string, n = 1) =>
  Effect.suspend(() => {
    const found = sink.received.filter((mail) => mail.to.includes(to) && mail.headers.includes(`Subject: ${subject}`))
    return found.length >= n ? Effect.succeed(found[n - 1] as ReceivedMail) : Effect.fail("not yet")
  }).pipe(
    Effect.retry(Schedule.spaced("25 millis").pipe(Schedule.upTo("5 seconds"))),
    Effect.orElse(() => Effect.dieMessage(`no mail "${subject}" to ${to}`))
  )

/** The bare token: the line after the one that introduces it. */
const tokenIn = (mail: ReceivedMail) => {
  const lines = mail.text.split(/\r?\n/)
  const at = lines.findIndex((line) => /^Or use this .* token:$/.test(line))
  return lines[at + 2] ?? ""
}

describe("mail through a real SMTP server", () => {
  layer(
    TestApp.layer("sqlite::memory:", {
      SERVICE_SMTP_URL: `smtp://127.0.0.1:${sink.port}`,
      SERVICE_MAIL_FROM: "Portcullis <auth@example.com>",
      SERVICE_PUBLIC_URL: "https://auth.example.com"
    }),
    { excludeTestServices: true }
  )((it) => {
    it.effect("register mails a verification link and token, which then works once and only once", () =>
      Effect.gen(function* () {
        const email = uniqueEmail()
        expect((yield* register(email)).status).toBe(202)
        const mail = yield* mailTo(email, "Confirm your email address")
        expect(mail.from).toBe("auth@example.com")
        expect(mail.headers).toMatch(/^From: Portcullis <auth@example\.com>/m)
        const token = tokenIn(mail)
        expect(token.split(".")).toHaveLength(3)
        expect(mail.text).toContain(`https://auth.example.com/verify-email?token=${token}`)
        expect((yield* call("POST", "/verify-email/confirm", { json: { token } })).status).toBe(200)
        expectProblem(yield* call("POST", "/verify-email/confirm", { json: { token } }), 401, "TokenBlacklistedError")
      })
    )

    it.effect("a reset request mails a reset link and token, which then works once and only once", () =>
      Effect.gen(function* () {
        const email = uniqueEmail()
        yield* register(email)
        expect((yield* call("POST", "/password-reset/request", { json: { email } })).status).toBe(202)
        const mail = yield* mailTo(email, "Reset your password")
        const token = tokenIn(mail)
        expect(mail.text).toContain(`https://auth.example.com/reset-password?token=${token}`)
        const body = { token, new_password: "a fresh and long passphrase" }
        expect((yield* call("POST", "/password-reset/confirm", { json: body })).status).toBe(200)
        expect((yield* login(email, body.new_password)).status).toBe(200)
        expectProblem(yield* call("POST", "/password-reset/confirm", { json: body }), 401, "TokenBlacklistedError")
      })
    )

    it.effect("an unknown address gets no mail", () =>
      Effect.gen(function* () {
        const email = uniqueEmail("nobody")
        expect((yield* call("POST", "/password-reset/request", { json: { email } })).status).toBe(202)
        yield* Effect.sleep("300 millis")
        expect(sink.received.filter((mail) => mail.to.includes(email))).toEqual([])
      })
    )
  })
})
