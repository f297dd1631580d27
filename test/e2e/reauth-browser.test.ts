import type { CDPSession, Page, Response } from "playwright-core"
import { afterAll, describe, expect, it } from "vitest"
import { browserSuite, launchChromium } from "../support/browser.js"
import { freePort, killAll, startServer, temporaryDatabase } from "../support/processes.js"

/** expect.poll with room for a busy machine: registering and signing in hash a password, which may wait its turn. */
const eventually = <T>(read: () => T | Promise<T>) => expect.poll(read, { timeout: 15_000 })

/**
 * The recent-sign-in rule (docs/behaviour.md, "Ways in") seen from a page: Debian's Chromium drives the
 * demo page of a real server process whose REAUTH_MAX_AGE_SECONDS is the minimum, 10. A passkey
 * added right after signing in is taken; once the sign-in is older, adding one is answered with
 * the RFC 9470 step-up challenge, the page says why and asks for the password, and after that
 * sign-in the same action adds a passkey that then signs in.
 *
 * Without /usr/bin/chromium the suite is skipped, so that `npm test` passes on a bare machine;
 * CI sets TEST_REQUIRE_CHROMIUM=1 (.ci/run installs chromium), which turns the skip into a failure.
 */

const suite = browserSuite("the recent-sign-in rule in a real browser (Chromium, CDP virtual authenticator)")
const maxAge = 10

afterAll(killAll)

/** A platform authenticator of the CDP's own, user verified, that answers without a prompt. */
const addAuthenticator = async (cdp: CDPSession) =>
  (
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
  ).authenticatorId

const credentialsOf = async (cdp: CDPSession, authenticatorId: string) =>
  (await cdp.send("WebAuthn.getCredentials", { authenticatorId })).credentials

/** Clicks "Add a passkey" and answers the page's register/begin exchange. */
const addPasskey = async (page: Page, name: string): Promise<Response> => {
  await page.locator("#device-name").fill(name)
  const begin = page.waitForResponse((response) => response.url().endsWith("/passkeys/register/begin"))
  await page.getByRole("button", { name: "Add a passkey" }).click()
  return begin
}

describe.skipIf(suite.skip)(suite.title, () => {
  it("adds a passkey right after signing in; with an old sign-in asks to sign in again, then adds one that signs in", {
    timeout: 90_000
  }, async () => {
    suite.requirePresent()
    const port = await freePort()
    const server = await startServer(
      {
        SERVICE_SECRET_KEY: "reauth-browser-secret-key-with-32-bytes-or-more",
        SERVICE_DATABASE_URL: temporaryDatabase(),
        SERVICE_LOG_LEVEL: "warning",
        SERVICE_DEMO: "true",
        SERVICE_PASSKEY_ENABLED: "true",
        SERVICE_PASSKEY_RP_ID: "localhost",
        SERVICE_PASSKEY_RP_NAME: "Portcullis demo",
        SERVICE_PASSKEY_ORIGINS: `http://localhost:${port}`,
        SERVICE_REAUTH_MAX_AGE_SECONDS: String(maxAge)
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
      const phone = await addAuthenticator(cdp)

      const status = page.locator("#status")
      const passkeys = page.locator("#passkeys")
      const email = `reauth-${Date.now()}@example.com`
      const password = "correct horse battery staple"
      await page.goto(`http://localhost:${port}/demo`)

      await page.locator("#register-email").fill(email)
      await page.locator("#register-password").fill(password)
      await page.getByRole("button", { name: "Register" }).click()
      await eventually(() => status.textContent()).toContain("Registered")
      await page.locator("#login-password").fill(password)
      await page.getByRole("button", { name: "Sign in", exact: true }).click()
      await eventually(() => status.textContent()).toBe("Signed in with a password.")
      // Taken once the page shows the sign-in, so the sign-in itself happened before it.
      const signedInAt = Date.now()

      // Right after signing in: taken.
      const fresh = await addPasskey(page, "Phone")
      expect(fresh.status()).toBe(200)
      await eventually(() => status.textContent()).toBe("Passkey added.")
      await eventually(() => passkeys.textContent()).toContain("Phone")
      expect(await credentialsOf(cdp, phone)).toHaveLength(1)

      // A second device: the phone's authenticator would refuse a second passkey for this user
      // (the options exclude the one it holds), and a passkey sign-in below must use the new one.
      await cdp.send("WebAuthn.removeVirtualAuthenticator", { authenticatorId: phone })
      const securityKey = await addAuthenticator(cdp)

      // The same page once its sign-in is older than REAUTH_MAX_AGE_SECONDS.
      await new Promise((resolve) => setTimeout(resolve, Math.max(0, signedInAt + (maxAge + 1) * 1000 - Date.now())))
      const old = await addPasskey(page, "Security key")
      expect(old.status()).toBe(401)
      expect(await old.headerValue("www-authenticate")).toMatch(
        new RegExp(`^Bearer error="insufficient_user_authentication", error_description="[^"]+", max_age=${maxAge}$`)
      )
      expect(await old.headerValue("content-type")).toMatch(/^application\/problem\+json/)
      expect(await old.json()).toMatchObject({ status: 401, code: "ReauthenticationRequiredError", max_age: maxAge })
      await expect
        .poll(() => status.textContent())
        .toBe(
          `Adding a passkey needs a sign-in within the last ${maxAge} seconds, and yours is older. Sign in again, then add the passkey.`
        )
      expect(await status.getAttribute("data-kind")).toBe("error")
      expect(await page.locator("#reauth").isVisible()).toBe(true)
      expect(await page.locator("#reauth-email").inputValue()).toBe(email)
      // Refused before any ceremony: the new device was never asked for a credential.
      expect(await credentialsOf(cdp, securityKey)).toHaveLength(0)
      expect(await passkeys.textContent()).not.toContain("Security key")

      // Signing in again with the password: the page swaps its session for the new one.
      await page.locator("#reauth-password").fill(password)
      await page.getByRole("button", { name: "Sign in again" }).click()
      await eventually(() => status.textContent()).toBe("Signed in again. Now add the passkey.")
      expect(await page.locator("#reauth").isHidden()).toBe(true)
      await eventually(() => page.getByRole("button", { name: /^Revoke/ }).count()).toBe(1)

      // The same action now adds the passkey.
      const again = await addPasskey(page, "Security key")
      expect(again.status()).toBe(200)
      await eventually(() => status.textContent()).toBe("Passkey added.")
      await eventually(() => passkeys.textContent()).toContain("Security key")
      expect(await passkeys.textContent()).toContain("Phone")
      expect(await credentialsOf(cdp, securityKey)).toHaveLength(1)

      // And it signs in: the browser holds only the security key's credential now.
      await page.getByRole("button", { name: "Sign out" }).click()
      await eventually(() => status.textContent()).toBe("Signed out.")
      await page.getByRole("button", { name: "Sign in with a passkey" }).click()
      await eventually(() => status.textContent()).toBe("Signed in with a passkey.")
      expect(await page.locator("#who").textContent()).toBe(email)
      await eventually(() => passkeys.locator("li", { hasText: "Security key" }).textContent()).toContain("last used")
      expect(await passkeys.locator("li", { hasText: "Phone" }).textContent()).toContain("never used")
      expect(failures).toEqual([])
    } finally {
      await browser.close()
      await server.stop()
    }
  })
})
