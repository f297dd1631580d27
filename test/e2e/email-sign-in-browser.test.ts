import { mkdirSync } from "node:fs"
import { createServer } from "node:http"
import type { AddressInfo } from "node:net"
import { join } from "node:path"
import { afterAll, describe, expect, it } from "vitest"
import { browserSuite, launchChromium } from "../support/browser.js"
import { freePort, killAll, root, startServer, temporaryDatabase } from "../support/processes.js"
import { type ReceivedMail, startSmtpSink } from "../support/SmtpSink.js"

/**
 * Passwordless sign-in for real: a server process mails through a real SMTP capture, and
 * Debian's Chromium follows the mailed link on the hosted /sign-in page, and signs up on the
 * demo page with a mailed code, adds a passkey (a CDP virtual authenticator) and signs in with
 * it. Screenshots are kept under test-results/.
 *
 * Without /usr/bin/chromium the suite is skipped, so that `npm test` passes on a bare machine;
 * CI sets TEST_REQUIRE_CHROMIUM=1 (.ci/run installs chromium), which turns the skip into a failure.
 */

const suite = browserSuite("passwordless sign-in in a real browser (Chromium), links and codes from real mail")
const results = join(root, "test-results")

const sink = await startSmtpSink()
afterAll(async () => {
  await killAll()
  await sink.close()
})

/** The n-th mail to `to` whose subject starts so, once it has arrived. */
const mailTo = async (to: string, subject: string, n = 1): Promise<ReceivedMail> => {
  for (let attempt = 0; attempt < 100; attempt++) {
    const mails = sink.received.filter((m) => m.to.includes(to) && m.subject.startsWith(subject))
    const mail = mails[n - 1]
    if (mail !== undefined) return mail
    await new Promise((resolve) => setTimeout(resolve, 50))
  }
  throw new Error(`no mail "${subject}" #${n} to ${to}`)
}

const signInLink = (mail: ReceivedMail) => {
  const link = /^(http:\/\/\S+\/sign-in\?token=\S+)$/m.exec(mail.text)?.[1]
  if (link === undefined) throw new Error(`no sign-in link in:\n${mail.text}`)
  return link
}

const codeIn = (mail: ReceivedMail) => {
  const code = /^([0-9]{6})$/m.exec(mail.text)?.[1]
  if (code === undefined) throw new Error(`no code in:\n${mail.text}`)
  return code
}

const eventually = <T>(read: () => T | Promise<T>) => expect.poll(read, { timeout: 15_000 })

const baseEnv = (port: number) => ({
  SERVICE_SECRET_KEY: "email-sign-in-secret-key-with-32-bytes-or-more",
  SERVICE_DATABASE_URL: temporaryDatabase(),
  SERVICE_LOG_LEVEL: "warning",
  SERVICE_SMTP_URL: `smtp://127.0.0.1:${sink.port}`,
  SERVICE_PUBLIC_URL: `http://localhost:${port}`,
  SERVICE_PRODUCT_NAME: "Portcullis test",
  SERVICE_EMAIL_SIGN_IN_ENABLED: "true"
})

describe.skipIf(suite.skip)(suite.title, () => {
  it("follows the mailed link on the hosted page and lands signed in (cookie mode)", { timeout: 120_000 }, async () => {
    suite.requirePresent()
    const port = await freePort()
    const server = await startServer(
      { ...baseEnv(port), SERVICE_TOKEN_TRANSPORT: "cookie", SERVICE_COOKIE_SECURE: "false" },
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
      page.on("console", (message) => {
        if (/Content Security Policy|Trusted Type/i.test(message.text())) failures.push(message.text())
      })
      const email = `link-${Date.now()}@example.com`
      expect((await post("/register", { email, password: "correct horse battery staple" })).status).toBe(202)
      expect((await post("/email-sign-in/request", { email })).status).toBe(202)
      const mail = await mailTo(email, "Your sign-in link")
      expect(mail.html).toContain(codeIn(mail))
      const link = signInLink(mail)

      await page.goto(link)
      // Read, then out of the address bar and the history; nothing is spent until the press.
      await eventually(() => page.url()).toBe(`http://localhost:${port}/sign-in`)
      const button = page.getByRole("button", { name: "Sign in" })
      await eventually(() => button.evaluate((element) => element === document.activeElement)).toBe(true)
      await page.keyboard.press("Enter")
      await eventually(() => page.locator("#result").textContent()).toContain(`You are signed in as ${email}`)
      mkdirSync(results, { recursive: true })
      // Kept at a phone's width and a laptop's, as test/e2e/hosted-pages-browser.test.ts keeps the other pages.
      for (const width of [390, 1280]) {
        await page.setViewportSize({ width, height: 800 })
        expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(width)
        await page.screenshot({ path: join(results, `hosted-sign-in-done-${width}.png`), fullPage: true })
      }

      // The session's cookies are the browser's now: an app's page on this site refreshes with
      // them (echoing the CSRF cookie) and the API knows who it is.
      const me = await page.evaluate(async (base) => {
        const csrf = /(?:^|; )portcullis_csrf=([^;]*)/.exec(document.cookie)?.[1] ?? ""
        const refreshed = await fetch(`${base}/refresh`, {
          method: "POST",
          credentials: "same-origin",
          headers: { "x-csrf-token": decodeURIComponent(csrf) }
        })
        const { access_token } = (await refreshed.json()) as { access_token: string }
        const response = await fetch(`${base}/me`, { headers: { authorization: `Bearer ${access_token}` } })
        return { status: response.status, body: await response.json() }
      }, api)
      expect(me.status).toBe(200)
      expect(me.body.email).toBe(email)
      expect(me.body.is_verified).toBe(true)

      // The same link again is spent; the page says so.
      await page.goto(link)
      await page.getByRole("button", { name: "Sign in" }).click()
      await eventually(() => page.locator("#result").getAttribute("data-kind")).toBe("error")
      expect(failures).toEqual([])
      expect(server.output()).not.toContain(new URL(link).searchParams.get("token") ?? "")
    } finally {
      await browser.close()
      await server.stop()
    }
  })

  it("in bearer mode never claims a sign-in it did not keep: the link goes on to APP_URL, or the page says where to finish", {
    timeout: 120_000
  }, async () => {
    suite.requirePresent()
    // The app: a page that only shows it was reached; what it is given is read from its address.
    const app = createServer((_, response) =>
      response.writeHead(200, { "content-type": "text/html" }).end("<h1>App</h1>")
    )
    await new Promise<void>((resolve) => app.listen(0, "127.0.0.1", resolve))
    const appUrl = `http://127.0.0.1:${(app.address() as AddressInfo).port}/signed-in`
    const browser = await launchChromium()
    try {
      for (const handOff of [appUrl, undefined]) {
        const port = await freePort()
        const server = await startServer(
          { ...baseEnv(port), ...(handOff === undefined ? {} : { SERVICE_APP_URL: handOff }) },
          { port }
        )
        const api = `http://localhost:${port}/api/v1/auth`
        const post = (path: string, body: unknown) =>
          fetch(api + path, {
            method: "POST",
            headers: { "content-type": "application/json" },
            body: JSON.stringify(body)
          })
        const email = `bearer-${Date.now()}@example.com`
        expect((await post("/register", { email, password: "correct horse battery staple" })).status).toBe(202)
        expect((await post("/email-sign-in/request", { email })).status).toBe(202)
        const link = signInLink(await mailTo(email, "Your sign-in link"))
        const token = new URL(link).searchParams.get("token") ?? ""
        const page = await browser.newPage()
        await page.goto(link)
        if (handOff === undefined) {
          await eventually(() => page.locator("#result").textContent()).toContain("type the 6-digit code")
          expect(await page.locator("#result").textContent()).not.toContain("signed in as")
          expect(await page.getByRole("button").count()).toBe(0)
          await page.screenshot({ path: join(results, "hosted-sign-in-bearer-no-app.png"), fullPage: true })
        } else {
          await page.getByRole("button", { name: "Continue to Portcullis test" }).click()
          await eventually(() => page.url()).toBe(`${appUrl}#sign_in_token=${encodeURIComponent(token)}`)
        }
        // Nothing was spent on the way: the app confirms the link and keeps the session.
        const confirmed = await post("/email-sign-in/confirm", { token })
        expect(confirmed.status).toBe(200)
        expect(((await confirmed.json()) as { user: { email: string } }).user.email).toBe(email)
        await page.close()
        await server.stop()
      }
    } finally {
      await browser.close()
      app.close()
    }
  })

  it("signs up with a mailed code on the demo page, adds a passkey and signs in with it", {
    timeout: 120_000
  }, async () => {
    suite.requirePresent()
    const port = await freePort()
    const server = await startServer(
      {
        ...baseEnv(port),
        SERVICE_EMAIL_SIGN_UP_ENABLED: "true",
        SERVICE_DEMO: "true",
        SERVICE_PASSKEY_ENABLED: "true",
        SERVICE_PASSKEY_RP_ID: "localhost",
        SERVICE_PASSKEY_RP_NAME: "Portcullis demo",
        SERVICE_PASSKEY_ORIGINS: `http://localhost:${port}`
      },
      { port }
    )
    const browser = await launchChromium()
    try {
      const context = await browser.newContext()
      const page = await context.newPage()
      const failures: Array<string> = []
      page.on("pageerror", (error) => failures.push(error.message))
      const cdp = await context.newCDPSession(page)
      await cdp.send("WebAuthn.enable")
      await cdp.send("WebAuthn.addVirtualAuthenticator", {
        options: {
          protocol: "ctap2",
          transport: "internal",
          hasResidentKey: true,
          hasUserVerification: true,
          isUserVerified: true,
          automaticPresenceSimulation: true
        }
      })
      const status = page.locator("#status")
      const email = `passwordless-${Date.now()}@example.com`
      await page.goto(`http://localhost:${port}/demo`)

      await page.locator("#email-address").fill(email)
      await page.getByRole("button", { name: "Mail me a link and a code" }).click()
      await eventually(() => status.textContent()).toContain("on its way")
      const mail = await mailTo(email, "Your sign-in link")
      await page.locator("#email-code").fill(codeIn(mail))
      await page.getByRole("button", { name: "Sign in with the code" }).click()
      await eventually(() => status.textContent()).toBe("Signed in with a mailed code.")
      expect(await page.locator("#who").textContent()).toBe(email)

      await page.locator("#device-name").fill("Virtual authenticator")
      await page.getByRole("button", { name: "Add a passkey" }).click()
      await eventually(() => status.textContent()).toBe("Passkey added.")

      await page.getByRole("button", { name: "Sign out" }).click()
      await eventually(() => status.textContent()).toBe("Signed out.")
      await page.getByRole("button", { name: "Sign in with a passkey" }).click()
      await eventually(() => status.textContent()).toBe("Signed in with a passkey.")
      expect(await page.locator("#who").textContent()).toBe(email)
      mkdirSync(results, { recursive: true })
      await page.screenshot({ path: join(results, "passwordless-passkey.png"), fullPage: true })

      // The account never had a password.
      const login = await fetch(`http://localhost:${port}/api/v1/auth/login`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ email, password: "any password at all" })
      })
      expect(login.status).toBe(401)
      expect(failures).toEqual([])
    } finally {
      await browser.close()
      await server.stop()
    }
  })
})
