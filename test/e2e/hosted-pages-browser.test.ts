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

/** A token shaped like the service's, with these claims, signed by nobody. */
const unsigned = (claims: object) =>
  [
    { alg: "HS256", typ: "JWT" },
    { sub: "someone", jti: "j", iat: 1, ...claims }
  ]
    .map((part) => Buffer.from(JSON.stringify(part)).toString("base64url"))
    .concat("c2lnbmF0dXJl")
    .join(".")

/** The widths each state is kept at: a phone's, and a laptop's. */
const widths = [390, 1280] as const

/**
 * A full-page screenshot of the page as it stands at each width, as test-results/hosted-<name>-<width>.png;
 * at a phone's width the card keeps off the screen's edges.
 */
const shots = async (page: Page, name: string) => {
  for (const width of widths) {
    await page.setViewportSize({ width, height: width === 390 ? 844 : 800 })
    const card = await page.locator("main").boundingBox()
    expect(card?.x, `${name} at ${width}px`).toBeGreaterThanOrEqual(12)
    expect((card?.x ?? 0) + (card?.width ?? 0), `${name} at ${width}px`).toBeLessThanOrEqual(width - 12)
    expect(
      await page.evaluate(() => document.documentElement.scrollWidth),
      `${name} at ${width}px`
    ).toBeLessThanOrEqual(width)
    await page.screenshot({ path: join(results, `hosted-${name}-${width}.png`), fullPage: true })
  }
}

/** Once a link is used or found dead: no form left, the reason said, and a way back to the app. */
const expectOver = async (page: Page, text: string, back: string) => {
  await eventually(() => resultOf(page).textContent()).toContain(text)
  expect(await page.locator("#form").isHidden()).toBe(true)
  expect(await page.locator("#form button").isDisabled()).toBe(true)
  const link = page.getByRole("link", { name: /^Back to / })
  expect(await link.isVisible()).toBe(true)
  expect(await link.getAttribute("href")).toBe(back)
}

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
        SERVICE_PRODUCT_NAME: "Portcullis test",
        // More calls count against verify_email (3 a minute) than it allows: confirmations, an address change, its links.
        SERVICE_AUTH_RATE_LIMIT_ENABLED: "false"
      },
      { port }
    )
    const api = `http://localhost:${port}/api/v1/auth`
    const back = `http://localhost:${port}/hosted/done`
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
      expect(await page.getByRole("link", { name: /^Back to / }).isHidden()).toBe(true)
      await shots(page, "verify-email-form")
      await confirmButton.focus()
      await page.keyboard.press("Enter")
      await eventually(() => resultOf(page).textContent()).toContain("Your email address is confirmed.")
      expect(await resultOf(page).evaluate((result) => result === document.activeElement)).toBe(true)
      expect(await confirmButton.isHidden()).toBe(true)
      await shots(page, "verify-email-done")

      const signedIn = (await (await post("/login", { email, password })).json()) as { user: { is_verified: boolean } }
      expect(signedIn.user.is_verified).toBe(true)

      // The same link again: the page says so in its own words (a link, not a token), and
      // leaves nothing to press.
      await page.goto(verifyLink)
      await page.getByRole("button", { name: "Confirm my email address" }).click()
      await eventually(() => resultOf(page).getAttribute("data-kind")).toBe("error")
      await expectOver(page, "This link has already been used", back)
      expect(await resultOf(page).textContent()).not.toMatch(/token/i)
      await shots(page, "verify-email-spent")

      expect((await post("/password-reset/request", { email })).status).toBe(202)
      const reset = await mailTo(email, "Reset your password")
      await page.goto(linkIn(reset, "reset-password"))
      await eventually(() => page.url()).toBe(`http://localhost:${port}/reset-password`)
      const newPassword = page.getByLabel("New password", { exact: true })
      const repeat = page.getByLabel("New password again")
      await eventually(() => newPassword.evaluate((input) => input === document.activeElement)).toBe(true)
      await shots(page, "reset-password-form")
      await newPassword.focus()

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
      await shots(page, "reset-password-refused")

      const chosen = "a brand new passphrase for the test"
      await newPassword.fill("")
      await newPassword.focus()
      await page.keyboard.type(chosen)
      await repeat.fill("")
      await repeat.focus()
      await page.keyboard.type(chosen)
      await page.keyboard.press("Enter")
      await eventually(() => resultOf(page).textContent()).toContain("Your password has been changed")
      // The way back, APP_URL being unset: the service's page saying the flow is over and what to set.
      await expectOver(page, "Sign in with the new password", back)
      await shots(page, "reset-password-done")
      await page.getByRole("link", { name: /^Back to / }).click()
      await eventually(() => page.getByRole("heading", { level: 1 }).textContent()).toBe("You are done here")
      expect(await page.locator("code").textContent()).toBe("SERVICE_APP_URL")
      await shots(page, "done")

      const login = await post("/login", { email, password: chosen })
      expect(login.status).toBe(200)
      expect((await post("/login", { email, password })).status).toBe(401)

      // An address change: the new address's link, then the current address's approval, both on
      // /confirm-email; then the old address's undo link on /undo-email-change.
      const { access_token } = (await login.json()) as { access_token: string }
      const moved = `moved-${Date.now()}@example.com`
      const change = await fetch(`${api}/me/email`, {
        method: "POST",
        headers: { "content-type": "application/json", authorization: `Bearer ${access_token}` },
        body: JSON.stringify({ new_email: moved, current_password: chosen })
      })
      expect(change.status).toBe(202)
      await page.goto(linkIn(await mailTo(moved, "Confirm your new email address"), "confirm-email"))
      const move = page.getByRole("button", { name: "Confirm the change" })
      await eventually(() => move.evaluate((button) => button === document.activeElement)).toBe(true)
      await shots(page, "confirm-email-form")
      await move.click()
      await expectOver(page, "once the link mailed to its current address is used too", back)
      await shots(page, "confirm-email-awaiting")
      expect((await post("/login", { email: moved, password: chosen })).status).toBe(401)
      await page.goto(linkIn(await mailTo(email, "Approve moving"), "confirm-email"))
      await page.getByRole("button", { name: "Confirm the change" }).click()
      await expectOver(page, "Your account now uses its new address.", back)
      await shots(page, "confirm-email-done")
      expect((await post("/login", { email: moved, password: chosen })).status).toBe(200)

      await page.goto(linkIn(await mailTo(email, "Your Portcullis test account moved"), "undo-email-change"))
      await eventually(() => page.url()).toBe(`http://localhost:${port}/undo-email-change`)
      const undo = page.getByRole("button", { name: "Undo the change" })
      await eventually(() => undo.evaluate((button) => button === document.activeElement)).toBe(true)
      await shots(page, "undo-email-change-form")
      await page.keyboard.press("Enter")
      await expectOver(page, "The account is back at this address.", back)
      const askReset = page.getByRole("button", { name: "Send me a password reset link" })
      await eventually(() => askReset.evaluate((button) => button === document.activeElement)).toBe(true)
      expect(await page.locator("#restored").textContent()).toBe(email)
      await shots(page, "undo-email-change-done")
      await page.keyboard.press("Enter")
      await eventually(() => resultOf(page).textContent()).toContain(`A password reset link is on its way to ${email}.`)
      await shots(page, "undo-email-change-reset-asked")
      expect((await post("/login", { email: moved, password: chosen })).status).toBe(401)
      expect((await post("/login", { email, password: chosen })).status).toBe(401)
      await eventually(
        () => sink.received.filter((m) => m.to.includes(email) && m.subject.startsWith("Reset your password")).length
      ).toBe(2)
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
  it("tells a link that cannot work at once, without a call, and one the service refuses in a link's words", {
    timeout: 120_000
  }, async () => {
    suite.requirePresent()
    const port = await freePort()
    const server = await startServer(
      {
        SERVICE_SECRET_KEY: "hosted-pages-secret-key-with-32-bytes-or-more",
        SERVICE_DATABASE_URL: temporaryDatabase(),
        SERVICE_SMTP_URL: `smtp://127.0.0.1:${sink.port}`,
        SERVICE_PUBLIC_URL: `http://localhost:${port}`,
        SERVICE_PRODUCT_NAME: "Portcullis test",
        SERVICE_EMAIL_SIGN_IN_ENABLED: "true",
        SERVICE_APP_URL: "https://app.example.com/sign-in",
        // Cookie mode: /sign-in confirms its link here (bearer mode hands it on to APP_URL unspent).
        SERVICE_TOKEN_TRANSPORT: "cookie",
        SERVICE_COOKIE_SECURE: "false"
      },
      { port }
    )
    const base = `http://localhost:${port}`
    const back = "https://app.example.com/sign-in"
    const browser = await launchChromium()
    try {
      const page = await browser.newPage()
      const calls: Array<string> = []
      page.on("request", (request) => {
        if (request.url().includes("/api/")) calls.push(request.url())
      })
      mkdirSync(results, { recursive: true })

      await page.goto(`${base}/verify-email`)
      await expectOver(page, "This link is incomplete.", back)
      await shots(page, "verify-email-missing")

      await page.goto(`${base}/reset-password?token=cut-short`)
      await expectOver(page, "This link is not valid", back)
      await shots(page, "reset-password-invalid")

      // A link of another purpose is no better: a verification link on the reset page.
      const hour = Math.floor(Date.now() / 1000) + 3600
      await page.goto(`${base}/reset-password?token=${unsigned({ type: "verify_email", exp: hour })}`)
      await expectOver(page, "This link is not valid", back)

      await page.goto(`${base}/confirm-email?token=cut-short`)
      await expectOver(page, "This link is not valid", back)
      await shots(page, "confirm-email-invalid")
      expect(calls).toEqual([])

      // Well-formed, but no change of the service's: only the service can tell.
      await page.goto(`${base}/confirm-email?token=${"B".repeat(43)}`)
      const move = page.getByRole("button", { name: "Confirm the change" })
      await eventually(() => move.isVisible()).toBe(true)
      await move.click()
      await expectOver(page, "The link is not valid", back)
      await shots(page, "confirm-email-refused")

      await page.goto(`${base}/sign-in?token=${"A".repeat(43)}`)
      const signIn = page.getByRole("button", { name: "Sign in" })
      await eventually(() => signIn.isVisible()).toBe(true)
      await shots(page, "sign-in-form")
      await signIn.click()
      await expectOver(page, "This link is not valid, has expired or has already been used.", back)
      await shots(page, "sign-in-refused")
      expect(await resultOf(page).textContent()).not.toMatch(/token/i)
      expect(calls).toHaveLength(2)
    } finally {
      await browser.close()
      await server.stop()
    }
  })
})
