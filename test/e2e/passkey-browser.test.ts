import { existsSync, mkdirSync } from "node:fs"
import { join } from "node:path"
import { afterAll, describe, expect, it } from "vitest"
import { browserSuite, launchChromium } from "../support/browser.js"
import { freePort, killAll, root, startServer, temporaryDatabase } from "../support/processes.js"

/** expect.poll with room for a busy machine: registering and signing in hash a password, which may wait its turn. */
const eventually = <T>(read: () => T | Promise<T>) => expect.poll(read, { timeout: 15_000 })

/**
 * Passkeys for real: Debian's Chromium (never a downloaded browser) drives the demo page of a
 * real server process, with a CDP virtual authenticator in place of a platform one. The page
 * registers an account, signs in with the password, adds a passkey, signs out and signs in
 * with the passkey; a screenshot of the signed-in page is kept under test-results/.
 *
 * Without /usr/bin/chromium the suite is skipped, so that `npm test` passes on a bare machine;
 * CI sets TEST_REQUIRE_CHROMIUM=1 (.ci/run installs chromium), which turns the skip into a failure.
 */

const suite = browserSuite("passkeys in a real browser (Chromium, CDP virtual authenticator)")
const screenshot = join(root, "test-results", "passkey-signed-in.png")

afterAll(killAll)

describe.skipIf(suite.skip)(suite.title, () => {
  it("registers a passkey on the demo page, signs out and signs in with it", { timeout: 90_000 }, async () => {
    suite.requirePresent()
    const port = await freePort()
    // The RP ID of local development: the page is opened on localhost, its origin allowed.
    const server = await startServer(
      {
        SERVICE_SECRET_KEY: "browser-test-secret-key-with-32-bytes-or-more",
        SERVICE_DATABASE_URL: temporaryDatabase(),
        SERVICE_LOG_LEVEL: "warning",
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
      const { authenticatorId } = await cdp.send("WebAuthn.addVirtualAuthenticator", {
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
      const email = `browser-${Date.now()}@example.com`
      const password = "correct horse battery staple"
      await page.goto(`http://localhost:${port}/demo`, { waitUntil: "networkidle" })
      // Without an OAuth provider the page asks for the providers, is told there are none to
      // ask about (404), and says nothing.
      expect(await status.textContent()).toBe("")

      await page.getByLabel("Email", { exact: true }).first().fill(email)
      await page.locator("#register-password").fill(password)
      await page.getByRole("button", { name: "Register" }).click()
      await eventually(() => status.textContent()).toContain("Registered")

      await page.locator("#login-password").fill(password)
      await page.getByRole("button", { name: "Sign in", exact: true }).click()
      await eventually(() => status.textContent()).toBe("Signed in with a password.")

      await page.locator("#device-name").fill("Virtual authenticator")
      await page.getByRole("button", { name: "Add a passkey" }).click()
      await eventually(() => status.textContent()).toBe("Passkey added.")
      await eventually(() => page.locator("#passkeys").textContent()).toContain("Virtual authenticator")
      const { credentials } = await cdp.send("WebAuthn.getCredentials", { authenticatorId })
      expect(credentials).toHaveLength(1)
      expect(credentials[0]?.isResidentCredential).toBe(true)

      await page.getByRole("button", { name: "Sign out" }).click()
      await eventually(() => status.textContent()).toBe("Signed out.")
      expect(await page.locator("#signed-in").isHidden()).toBe(true)

      // No email: the browser offers the discoverable credential it holds for localhost.
      await page.getByRole("button", { name: "Sign in with a passkey" }).click()
      await eventually(() => status.textContent()).toBe("Signed in with a passkey.")
      expect(await page.locator("#who").textContent()).toBe(email)
      await eventually(() => page.locator("#sessions").textContent()).toContain("(this session)")
      await eventually(() => page.locator("#passkeys").textContent()).toContain("last used")
      const after = await cdp.send("WebAuthn.getCredentials", { authenticatorId })
      expect(after.credentials[0]?.signCount).toBeGreaterThan(0)
      // Times and clients as a person reads them, not the API's ISO instants and user agents.
      const lists = `${await page.locator("#sessions").textContent()} ${await page.locator("#passkeys").textContent()}`
      expect(lists).not.toMatch(/\d{4}-\d{2}-\d{2}T|Mozilla/)
      expect(await page.locator("#passkeys").textContent()).toContain(
        "Virtual authenticator, added just now, last used just now"
      )
      expect(await page.locator("#sessions").textContent()).toMatch(
        /^Chrome on Linux from \S+, signed in just now \(this session\)/
      )

      mkdirSync(join(root, "test-results"), { recursive: true })
      await page.screenshot({ path: screenshot, fullPage: true })
      expect(existsSync(screenshot)).toBe(true)
      await page.setViewportSize({ width: 390, height: 844 })
      // Nothing wider than a phone: a long address breaks instead of scrolling the page sideways.
      expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(390)
      await page.screenshot({ path: screenshot.replace(".png", "-390.png"), fullPage: true })
      await page.setViewportSize({ width: 1280, height: 800 })

      // Revoking the current session from the list signs the page out.
      await page
        .getByRole("button", { name: /^Revoke/ })
        .first()
        .click()
      await eventually(() => status.textContent()).toContain("revoked")
      expect(failures).toEqual([])
    } finally {
      await browser.close()
      await server.stop()
    }
  })
})
