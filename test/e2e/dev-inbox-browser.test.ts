import { mkdirSync } from "node:fs"
import { join } from "node:path"
import { afterAll, describe, expect, it } from "vitest"
import { browserSuite, launchChromium } from "../support/browser.js"
import { freePort, killAll, root, startServer, temporaryDatabase } from "../support/processes.js"

/**
 * The development inbox: a service on a laptop (loopback, no SMTP_URL) keeps its mails and shows
 * them at /dev/inbox, where Debian's Chromium opens the verification mail, follows its link to the
 * hosted page and confirms the address. Only this machine's own browsers are served: a request
 * that came through a proxy is answered as a path nothing serves.
 */

const suite = browserSuite("the development inbox in a real browser (Chromium)")
const results = join(root, "test-results")

afterAll(killAll)

describe.skipIf(suite.skip)(suite.title, () => {
  it("keeps the mails by default on loopback; the verification link clicked there verifies the account", {
    timeout: 120_000
  }, async () => {
    suite.requirePresent()
    const port = await freePort()
    // No SMTP_URL, no MAILER: the development inbox is the default on a loopback service.
    const server = await startServer(
      {
        SERVICE_SECRET_KEY: "dev-inbox-secret-key-with-32-bytes-or-more",
        SERVICE_DATABASE_URL: temporaryDatabase(),
        SERVICE_PRODUCT_NAME: "Portcullis test"
      },
      { port }
    )
    const base = `http://localhost:${port}`
    expect(server.output()).toContain(`read them at ${base}/dev/inbox (this machine only)`)
    const api = `${base}/api/v1/auth`
    const email = `inbox-${Date.now()}@example.com`
    const password = "correct horse battery staple"
    const registered = await fetch(`${api}/register`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ email, password })
    })
    expect(registered.status).toBe(202)

    // Through a proxy (a forwarding header), the inbox is not there.
    const proxied = await fetch(`${base}/dev/inbox`, { headers: { "x-forwarded-for": "203.0.113.9" } })
    expect(proxied.status).toBe(404)

    const browser = await launchChromium()
    try {
      const page = await browser.newPage()
      const failures: Array<string> = []
      page.on("pageerror", (error) => failures.push(error.message))
      await page.goto(`${base}/dev/inbox`)
      const mail = page.getByRole("article").filter({ hasText: email })
      await expect.poll(() => mail.count(), { timeout: 15_000 }).toBe(1)
      expect(await mail.getByRole("heading").textContent()).toBe("Confirm your email address for Portcullis test")
      mkdirSync(results, { recursive: true })
      for (const width of [390, 1280]) {
        await page.setViewportSize({ width, height: 900 })
        expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(width)
        await page.screenshot({ path: join(results, `dev-inbox-${width}.png`), fullPage: true })
      }
      await mail.getByRole("link", { name: /\/verify-email\?token=/ }).click()
      await expect.poll(() => new URL(page.url()).pathname).toBe("/verify-email")
      await page.getByRole("button", { name: "Confirm my email address" }).click()
      await expect
        .poll(() => page.locator("#result").textContent(), { timeout: 15_000 })
        .toContain("Your email address is confirmed")

      const login = await fetch(`${api}/login`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ email, password })
      })
      expect(((await login.json()) as { user: { is_verified: boolean } }).user.is_verified).toBe(true)
      expect(failures).toEqual([])
    } finally {
      await browser.close()
      await server.stop()
    }
  })
})
