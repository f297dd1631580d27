import { mkdirSync } from "node:fs"
import { join } from "node:path"
import type { Page } from "playwright-core"
import { afterAll, describe, expect, it } from "vitest"
import { browserSuite, launchChromium } from "../support/browser.js"
import { freePort, killAll, root, startServer, temporaryDatabase } from "../support/processes.js"
import { type ReceivedMail, startSmtpSink } from "../support/SmtpSink.js"

/**
 * The mailed flows for real: a server process mails through a real SMTP capture, and Debian's
 * Chromium (never a downloaded browser) opens the links from the captured mails and completes
 * them on the hosted pages, with the keyboard only. Screenshots are kept under test-results/.
 *
 * Without /usr/bin/chromium the suite is skipped, so that `npm test` passes on a bare machine;
 * CI sets TEST_REQUIRE_CHROMIUM=1 (.ci/run installs chromium), which turns the skip into a failure.
 */

const suite = browserSuite("the hosted pages in a real browser (Chromium), links from real mail")
const results = join(root, "test-results")

const sink = await startSmtpSink()
afterAll(async () => {
  await killAll()
  await sink.close()
})

/** The first mail to `to` whose subject starts so, once it has arrived. */
const mailTo = async (to: string, subject: string): Promise<ReceivedMail> => {
  for (let attempt = 0; attempt < 100; attempt++) {
    const mail = sink.received.find((m) => m.to.includes(to) && m.subject.startsWith(subject))
    if (mail !== undefined) return mail
    await new Promise((resolve) => setTimeout(resolve, 50))
  }
  throw new Error(`no mail "${subject}" to ${to}`)
}

/** The link of a mail's text part that opens `page`. */
const linkIn = (mail: ReceivedMail, page: string) => {
  const link = new RegExp(`^(http://\\S+/${page}\\?token=\\S+)$`, "m").exec(mail.text)?.[1]
  if (link === undefined) throw new Error(`no ${page} link in:\n${mail.text}`)
  return link
}

const resultOf = (page: Page) => page.locator("#result")

/** expect.poll with room for a busy machine: a reset hashes a password, which may wait its turn. */
const eventually = <T>(read: () => T | Promise<T>) => expect.poll(read, { timeout: 15_000 })

describe.skipIf(suite.skip)(suite.title, () => {
  it("registers, verifies the address and resets the password on the hosted pages, then signs in", {
    timeout: 120_000
  }, async () => {
    suite.requirePresent()
    const port = await freePort()
    const server = await startServer(
      {
        SERVICE_SECRET_KEY: "hosted-pages-secret-key-with-32-bytes-or-more",
        SERVICE_DATABASE_URL: temporaryDatabase(),
        SERVICE_LOG_LEVEL: "info",
        SERVICE_SMTP_URL: `smtp://127.0.0.1:${sink.port}`,
        SERVICE_PUBLIC_URL: `http://localhost:${port}`,
        SERVICE_PRODUCT_NAME: "Portcullis test"
      },
      { port }
    )
    const api = `http://localhost:${port}/api/v1/auth`
    const post = (path: string, body: unknown) =>
      fetch(api + path, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) })
    const browser = await launchChromium()
    try {
      const page = await browser.newPage()
      const failures: Array<string> = []
      page.on("pageerror", (error) => failures.push(error.message))
      // A Content-Security-Policy or Trusted Types violation is reported on the console; so are
      // the API calls the test expects to be refused (401, 422), which are no failure.
      page.on("console", (message) => {
        if (/Content Security Policy|Trusted Type/i.test(message.text())) failures.push(message.text())
      })
      mkdirSync(results, { recursive: true })

      const email = `hosted-${Date.now()}@example.com`
      const password = "correct horse battery staple"
      expect((await post("/register", { email, password })).status).toBe(202)

      const verification = await mailTo(email, "Confirm your email address")
      const verifyLink = linkIn(verification, "verify-email")
      const token = new URL(verifyLink).searchParams.get("token") ?? ""
      await page.goto(verifyLink)
      // Read, then out of the address bar and the history.
      await eventually(() => page.url()).toBe(`http://localhost:${port}/verify-email`)
      const confirmButton = page.getByRole("button", { name: "Confirm my email address" })
      await eventually(() => confirmButton.evaluate((button) => button === document.activeElement)).toBe(true)
      await page.keyboard.press("Enter")
      await eventually(() => resultOf(page).textContent()).toContain("Your email address is confirmed.")
      expect(await resultOf(page).evaluate((result) => result === document.activeElement)).toBe(true)
      expect(await confirmButton.isHidden()).toBe(true)
      await page.screenshot({ path: join(results, "hosted-verify-email.png"), fullPage: true })

      const signedIn = (await (await post("/login", { email, password })).json()) as { user: { is_verified: boolean } }
      expect(signedIn.user.is_verified).toBe(true)

      // The same link again: the page shows the API's own detail.
      await page.goto(verifyLink)
      await page.getByRole("button", { name: "Confirm my email address" }).click()
      await eventually(() => resultOf(page).getAttribute("data-kind")).toBe("error")
      const spent = (await (await post("/verify-email/confirm", { token })).json()) as { detail: string }
      expect((await resultOf(page).textContent())?.trim()).toBe(spent.detail)

      expect((await post("/password-reset/request", { email })).status).toBe(202)
      const reset = await mailTo(email, "Reset your password")
      await page.goto(linkIn(reset, "reset-password"))
      await eventually(() => page.url()).toBe(`http://localhost:${port}/reset-password`)
      const newPassword = page.getByLabel("New password", { exact: true })
      const repeat = page.getByLabel("New password again")
      await eventually(() => newPassword.evaluate((input) => input === document.activeElement)).toBe(true)

      // Two different entries are caught on the page, before any call.
      await page.keyboard.type("one passphrase here")
      await page.keyboard.press("Tab")
      await page.keyboard.type("another passphrase")
      expect(await repeat.inputValue()).toBe("another passphrase")
      await page.keyboard.press("Enter")
      await eventually(() => resultOf(page).textContent()).toContain("The two passwords differ.")
      expect(await repeat.getAttribute("aria-invalid")).toBe("true")

      // Refused by the password policy: the page says why, and marks the field.
      await newPassword.fill("short")
      await repeat.fill("short")
      await repeat.press("Enter")
      await eventually(() => resultOf(page).textContent()).toContain("8 characters")
      expect(await resultOf(page).getAttribute("data-kind")).toBe("error")
      expect(await newPassword.getAttribute("aria-invalid")).toBe("true")
      await page.screenshot({ path: join(results, "hosted-reset-password-refused.png"), fullPage: true })

      const chosen = "a brand new passphrase for the test"
      await newPassword.fill("")
      await newPassword.focus()
      await page.keyboard.type(chosen)
      await repeat.fill("")
      await repeat.focus()
      await page.keyboard.type(chosen)
      await page.keyboard.press("Enter")
      await eventually(() => resultOf(page).textContent()).toContain("Your password has been changed")
      await page.screenshot({ path: join(results, "hosted-reset-password.png"), fullPage: true })

      expect((await post("/login", { email, password: chosen })).status).toBe(200)
      expect((await post("/login", { email, password })).status).toBe(401)
      expect(failures).toEqual([])
      // The mailed tokens rode in query strings, which the access log leaves out.
      expect(server.output()).toContain('"path":"/verify-email"')
      expect(server.output()).not.toContain(token)
      expect(server.output()).not.toContain("token=")
    } finally {
      await browser.close()
      await server.stop()
    }
  })
})
