import { mkdtempSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, describe, expect, layer } from "@effect/vitest"
import { Effect, Schedule } from "effect"
import { call, expectProblem, login, register, uniqueEmail } from "../support/flows.js"
import { type ReceivedMail, startSmtpSink } from "../support/SmtpSink.js"
import * as TestApp from "../support/TestApp.js"

const sink = await startSmtpSink()
afterAll(() => sink.close())

/** Waits for the n-th mail to `to` whose subject starts so. */
const mailTo = (to: string, subject: string, n = 1) =>
  Effect.suspend(() => {
    const found = sink.received.filter((mail) => mail.to.includes(to) && mail.subject.startsWith(subject))
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

/** Both parts of a multipart/alternative message, each with the link and the token. */
const expectBothParts = (mail: ReceivedMail, link: string, token: string) => {
  expect(mail.headers).toMatch(/^Content-Type: multipart\/alternative/im)
  expect(mail.text).toContain(link)
  expect(mail.text.split(/\r?\n/)).toContain(token)
  expect(mail.html).toContain(`<a href="${link}"`)
  expect(mail.html).toContain(token)
  expect(mail.html).toMatch(/^<!doctype html>/i)
}

describe("mail through a real SMTP server", () => {
  layer(
    TestApp.layer("sqlite::memory:", {
      SERVICE_SMTP_URL: `smtp://127.0.0.1:${sink.port}`,
      SERVICE_MAIL_FROM: "Portcullis <auth@example.com>",
      SERVICE_PUBLIC_URL: "https://auth.example.com",
      SERVICE_PRODUCT_NAME: "Example Cloud"
    }),
    { excludeTestServices: true }
  )((it) => {
    it.effect(
      "register mails a verification link and token, in text and HTML, which then work once and only once",
      () =>
        Effect.gen(function* () {
          const email = uniqueEmail()
          expect((yield* register(email)).status).toBe(202)
          const mail = yield* mailTo(email, "Confirm your email address")
          expect(mail.subject).toBe("Confirm your email address for Example Cloud")
          expect(mail.from).toBe("auth@example.com")
          expect(mail.headers).toMatch(/^From: Portcullis <auth@example\.com>/m)
          const token = tokenIn(mail)
          expect(token.split(".")).toHaveLength(3)
          expectBothParts(mail, `https://auth.example.com/verify-email?token=${token}`, token)
          expect(mail.text).toContain(`your Example Cloud account (${email})`)
          expect(mail.html).toContain("Example Cloud")
          expect((yield* call("POST", "/verify-email/confirm", { json: { token } })).status).toBe(200)
          expectProblem(yield* call("POST", "/verify-email/confirm", { json: { token } }), 401, "TokenBlacklistedError")
        })
    )

    it.effect(
      "a reset request mails a reset link and token, in text and HTML, which then work once and only once",
      () =>
        Effect.gen(function* () {
          const email = uniqueEmail()
          yield* register(email)
          expect((yield* call("POST", "/password-reset/request", { json: { email } })).status).toBe(202)
          const mail = yield* mailTo(email, "Reset your password")
          expect(mail.subject).toBe("Reset your password for Example Cloud")
          const token = tokenIn(mail)
          expectBothParts(mail, `https://auth.example.com/reset-password?token=${token}`, token)
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

/** A deployment's folder replacing the verification mail's two templates, the reset mail left built in. */
const templatesDir = mkdtempSync(join(tmpdir(), "portcullis-templates-"))
writeFileSync(
  join(templatesDir, "verify-email.txt"),
  "Subject: Welcome to {{product}}\n\nHello {{email}}, welcome aboard.\nFinish here: {{link}}\nCode:\n{{token}}\n"
)
writeFileSync(
  join(templatesDir, "verify-email.html"),
  '<p class="custom">Welcome to {{product}}, {{email}}.</p><p><a href="{{link}}">Finish</a></p>'
)

describe("mail from a deployment's templates (MAIL_TEMPLATES_DIR)", () => {
  layer(
    TestApp.layer("sqlite::memory:", {
      SERVICE_SMTP_URL: `smtp://127.0.0.1:${sink.port}`,
      SERVICE_PUBLIC_URL: "https://auth.example.com",
      SERVICE_PRODUCT_NAME: "Acme <Cloud> & Co",
      SERVICE_MAIL_TEMPLATES_DIR: templatesDir
    }),
    { excludeTestServices: true }
  )((it) => {
    it.effect("a replaced template gives the mail its words, with every value escaped in the HTML part", () =>
      Effect.gen(function* () {
        const email = uniqueEmail("custom")
        expect((yield* register(email)).status).toBe(202)
        const mail = yield* mailTo(email, "Welcome to")
        expect(mail.subject).toBe("Welcome to Acme <Cloud> & Co")
        const token = /^Code:\r?\n(.+)$/m.exec(mail.text)?.[1] ?? ""
        expect(token.split(".")).toHaveLength(3)
        const link = `https://auth.example.com/verify-email?token=${token}`
        // The transport may end a part with a line break of its own.
        expect(mail.text.replace(/\r\n/g, "\n").trimEnd()).toBe(
          `Hello ${email}, welcome aboard.\nFinish here: ${link}\nCode:\n${token}`
        )
        expect(mail.html.trimEnd()).toBe(
          `<p class="custom">Welcome to Acme &lt;Cloud&gt; &amp; Co, ${email}.</p><p><a href="${link}">Finish</a></p>`
        )
        expect((yield* call("POST", "/verify-email/confirm", { json: { token } })).status).toBe(200)
      })
    )

    it.effect("a template the folder lacks stays built in", () =>
      Effect.gen(function* () {
        const email = uniqueEmail("builtin")
        yield* register(email)
        expect((yield* call("POST", "/password-reset/request", { json: { email } })).status).toBe(202)
        const mail = yield* mailTo(email, "Reset your password")
        expect(mail.subject).toBe("Reset your password for Acme <Cloud> & Co")
        expect(mail.html).toContain("Acme &lt;Cloud&gt; &amp; Co")
        expect(mail.text).toContain("https://auth.example.com/reset-password?token=")
      })
    )
  })
})
