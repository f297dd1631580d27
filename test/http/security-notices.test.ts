import { afterAll, describe, expect, layer } from "@effect/vitest"
import { Effect, Schedule } from "effect"
import type { SecurityNoticeJson } from "../../config/Deployment.js"
import { call, password, signUp } from "../support/flows.js"
import { type ReceivedMail, startSmtpSink } from "../support/SmtpSink.js"
import * as TestApp from "../support/TestApp.js"

const sink = await startSmtpSink()
afterAll(() => sink.close())

const smtp = {
  SERVICE_SMTP_URL: `smtp://127.0.0.1:${sink.port}`,
  SERVICE_PUBLIC_URL: "https://auth.example.com",
  SERVICE_PRODUCT_NAME: "Example Cloud"
}

const noticesTo = (to: string) =>
  sink.received.filter((mail) => mail.to.includes(to) && mail.subject.startsWith("Security notice"))

/** Waits until `check` holds, for mail that is sent after the request has been answered. */
const eventually = <A>(what: string, check: () => A | undefined) =>
  Effect.suspend(() => {
    const found = check()
    return found === undefined ? Effect.fail("not yet") : Effect.succeed(found)
  }).pipe(
    Effect.retry(Schedule.spaced("25 millis").pipe(Schedule.upTo("5 seconds"))),
    Effect.orElse(() => Effect.dieMessage(`no ${what}`))
  )

/** A browser's User-Agent with markup in it: the client says what it likes. */
const userAgent = 'Mozilla/5.0 <img src=x onerror=alert(1)> "Firefox/140.0"'
const newPassword = "a brand new passphrase 42"

/** Changes the session's password, the current one proven, from a client of its own. */
const changePassword = (access: string) =>
  Effect.gen(function* () {
    const changed = yield* call("POST", "/change-password", {
      token: access,
      json: { current_password: password, new_password: newPassword },
      headers: { "user-agent": userAgent }
    })
    expect(changed.status).toBe(200)
  })

describe("security notices by mail", () => {
  layer(TestApp.layer("sqlite::memory:", smtp), { excludeTestServices: true })((it) => {
    it.effect("a password change mails its owner one notice naming the change, the IP address and the client", () =>
      Effect.gen(function* () {
        const user = yield* signUp("notice")
        yield* changePassword(user.access)
        const mail: ReceivedMail = yield* eventually("notice", () => noticesTo(user.email)[0])
        expect(mail.subject).toBe("Security notice for Example Cloud: Your password was changed")
        const text = mail.text.split(/\r?\n/)
        expect(text).toEqual(
          expect.arrayContaining([
            "The password of your account was changed.",
            `Account: ${user.email}`,
            "IP address: 127.0.0.1",
            `Client: ${userAgent}`
          ])
        )
        expect(text.find((line) => line.startsWith("When: "))).toMatch(/^When: \d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC$/)
        expect(mail.html).toContain("The password of your account was changed.")
        expect(mail.html).toContain(">Mozilla/5.0 &lt;img src=x onerror=alert(1)&gt; &quot;Firefox/140.0&quot;</td>")
        expect(mail.html).not.toContain("<img")
        expect(`${mail.text}${mail.html}`).not.toContain("token")
        // Only one notice, however long one waits.
        yield* Effect.sleep("300 millis")
        expect(noticesTo(user.email)).toHaveLength(1)
      })
    )
  })
})

describe("SECURITY_NOTICES=false", () => {
  layer(TestApp.layer("sqlite::memory:", { ...smtp, SERVICE_SECURITY_NOTICES: "false" }), {
    excludeTestServices: true
  })((it) => {
    it.effect("a password change mails no notice", () =>
      Effect.gen(function* () {
        const user = yield* signUp("quiet")
        yield* changePassword(user.access)
        // A mail sent after the change arrives; the notice, sent before it, would have too.
        expect((yield* call("POST", "/password-reset/request", { json: { email: user.email } })).status).toBe(202)
        yield* eventually("reset mail", () =>
          sink.received.find((mail) => mail.to.includes(user.email) && mail.subject.startsWith("Reset your password"))
        )
        yield* Effect.sleep("300 millis")
        expect(noticesTo(user.email)).toEqual([])
      })
    )
  })
})

const handled: Array<readonly [string, SecurityNoticeJson]> = []

describe("a deployment's send_security_notice handler", () => {
  layer(
    TestApp.layer("sqlite::memory:", smtp, {
      deployment: { events: { send_security_notice: (email, notice) => void handled.push([email, notice]) } }
    }),
    { excludeTestServices: true }
  )((it) => {
    it.effect("receives the address and the notice as JSON, and replaces the mail", () =>
      Effect.gen(function* () {
        const user = yield* signUp("handled")
        yield* changePassword(user.access)
        const [email, notice] = yield* eventually("handled notice", () => handled.find(([to]) => to === user.email))
        expect(email).toBe(user.email)
        expect(notice).toEqual({
          kind: "password_changed",
          subject: "",
          occurred_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
          ip_address: "127.0.0.1",
          user_agent: userAgent
        })
        yield* Effect.sleep("300 millis")
        expect(noticesTo(user.email)).toEqual([])
        expect(handled.filter(([to]) => to === user.email)).toHaveLength(1)
      })
    )
  })
})
