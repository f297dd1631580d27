import { mkdirSync } from "node:fs"
import { join } from "node:path"
import { Effect, Exit, Scope } from "effect"
import * as oidc from "openid-client"
import type { Browser } from "playwright-core"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { Cryptography } from "../../application/ports/Cryptography.js"
import { createApp } from "../../examples/oidc-app/app.js"
import { browserSuite, launchChromium } from "../support/browser.js"
import { customProviderOn, type FakeOAuthProvider, fakeOAuthProvider } from "../support/FakeOAuthProvider.js"
import { password, signIn } from "../support/flows.js"
import { makeOutbox } from "../support/Outbox.js"
import { addClient } from "../support/oidcFixtures.js"
import { confidential, redirectUri, useProvider } from "../support/openidProvider.js"
import { root } from "../support/processes.js"
import * as TestApp from "../support/TestApp.js"

/**
 * The provider's hosted pages in Debian's Chromium: an app's authorization URL opened, the user
 * signs in on /oauth2/sign-in by the fields' labels, allows the app on /oauth2/consent, and the
 * browser lands on the app's redirect URI (answered by the test, never the network) with a code
 * openid-client redeems. At a phone's width (390 px) the pages do not scroll sideways; screenshots
 * at 390 and 1280 px are kept under test-results/.
 */

const suite = browserSuite("the OpenID Provider's hosted pages in a real browser (Chromium)")
const results = join(root, "test-results")
const social = { id: "acme-client", secret: "acme-secret" }

describe.skipIf(suite.skip)(suite.title, () => {
  const scope = Effect.runSync(Scope.make())
  let fake: FakeOAuthProvider | undefined
  beforeAll(async () => {
    fake = await Effect.runPromise(Scope.extend(fakeOAuthProvider([social]), scope))
  })
  afterAll(() => Effect.runPromise(Scope.close(scope, Exit.void)))

  const outbox = makeOutbox()
  const provider = useProvider(
    { name: "memory", databaseUrl: "memory:" },
    {
      host: "localhost",
      deployment: { events: outbox.handlers },
      env: (base) => ({
        SERVICE_PRODUCT_NAME: "Portcullis test",
        SERVICE_PASSKEY_ENABLED: "true",
        SERVICE_PASSKEY_RP_ID: "localhost",
        SERVICE_PASSKEY_RP_NAME: "Portcullis test",
        SERVICE_PASSKEY_ORIGINS: base,
        SERVICE_EMAIL_SIGN_IN_ENABLED: "true",
        SERVICE_OAUTH_CUSTOM_PROVIDERS: JSON.stringify(
          fake === undefined ? [] : [customProviderOn(fake, "acme", social, [`${base}/api/v1/auth/oauth2/sign-in`])]
        )
      })
    }
  )
  let browser: Browser | undefined

  beforeAll(async () => {
    suite.requirePresent()
    mkdirSync(results, { recursive: true })
    browser = await launchChromium()
  }, 60_000)
  afterAll(() => browser?.close())

  for (const width of [390, 1280]) {
    it(`signs a user in and asks consent, at ${width} px, keyboard and labels only`, async () => {
      const config = await provider.configFor(confidential)
      const email = await provider.newUser()
      const { url, checks } = await provider.start(config, "openid email")
      const context = await (browser as Browser).newContext({ viewport: { width, height: 800 } })
      const page = await context.newPage()
      let landed: string | undefined
      await page.route("https://app.example.com/**", (route) => {
        landed = route.request().url()
        return route.fulfill({ status: 200, contentType: "text/plain", body: "the app" })
      })
      await page.goto(url.href)
      await expect.poll(() => page.url()).toContain("/oauth2/sign-in")
      await page.getByLabel("Email address", { exact: true }).fill(email)
      await page.getByLabel("Password").fill(password)
      const wide = await page.evaluate(() => document.documentElement.scrollWidth)
      expect(wide).toBeLessThanOrEqual(width)
      await page.screenshot({ path: join(results, `oidc-sign-in-${width}.png`), fullPage: true })
      await page.getByLabel("Password").press("Enter")

      await expect.poll(() => page.url()).toContain("/oauth2/consent")
      await expect.poll(() => page.locator("#client").textContent()).toBe("Team wiki")
      expect(await page.locator("#scopes li").allTextContents()).toEqual([
        "who you are on this service",
        "your email address, and whether it is confirmed"
      ])
      // The first button has the focus: Enter allows.
      expect(await page.evaluate(() => document.activeElement?.textContent)).toBe("Allow")
      await page.screenshot({ path: join(results, `oidc-consent-${width}.png`), fullPage: true })
      await page.keyboard.press("Enter")

      await expect.poll(() => landed, { timeout: 15_000 }).toBeDefined()
      const callback = new URL(landed ?? "")
      expect(`${callback.origin}${callback.pathname}`).toBe(redirectUri)
      const tokens = await oidc.authorizationCodeGrant(config, callback, checks)
      expect(tokens.claims()?.email).toBe(email)
      await context.close()
    })
  }

  it("signs a user in with a passkey (a virtual authenticator), amr hwk and user", async () => {
    const config = await provider.configFor(confidential)
    const email = await provider.newUser()
    const own = await provider.run(signIn(email))
    const context = await (browser as Browser).newContext()
    const page = await context.newPage()
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
    let landed: string | undefined
    await page.route("https://app.example.com/**", (route) => {
      landed = route.request().url()
      return route.fulfill({ status: 200, contentType: "text/plain", body: "the app" })
    })
    const { url, checks } = await provider.start(config, "openid email")
    await page.goto(url.href)
    await expect.poll(() => page.url()).toContain("/oauth2/sign-in")
    // The user's passkey, added through the API from this page's origin with the page's own bundle.
    const added = await page.evaluate(
      async ({ prefix, token }) => {
        const headers = { "content-type": "application/json", authorization: `Bearer ${token}` }
        const begin = await (await fetch(`${prefix}/passkeys/register/begin`, { method: "POST", headers })).json()
        const { challenge_key, ...optionsJSON } = begin
        const browser = (
          window as unknown as { SimpleWebAuthnBrowser: { startRegistration: (o: unknown) => Promise<unknown> } }
        ).SimpleWebAuthnBrowser
        const credential = await browser.startRegistration({ optionsJSON })
        const body = JSON.stringify({ challenge_key, credential, device_name: "Virtual authenticator" })
        return (await fetch(`${prefix}/passkeys/register/complete`, { method: "POST", headers, body })).status
      },
      { prefix: provider.authPrefix, token: own.access }
    )
    expect(added).toBe(201)
    await page.getByRole("button", { name: "Sign in with a passkey" }).click()
    await expect.poll(() => page.url()).toContain("/oauth2/consent")
    await expect.poll(() => page.locator("#client").textContent()).toBe("Team wiki")
    await page.getByRole("button", { name: "Allow" }).click()
    await expect.poll(() => landed, { timeout: 15_000 }).toBeDefined()
    const tokens = await oidc.authorizationCodeGrant(config, new URL(landed ?? ""), checks)
    expect(tokens.claims()?.email).toBe(email)
    expect(tokens.claims()?.amr).toEqual(["hwk", "user"])
    await context.close()
  })

  it("signs a user in through a social provider that returns to the sign-in page, amr fed", async () => {
    const config = await provider.configFor(confidential)
    const email = `social-${Date.now()}@example.com`
    fake?.signInAs("custom", { userinfo: { uid: `acme-${email}`, mail: email, mail_ok: true, display: "Ada" } })
    const context = await (browser as Browser).newContext()
    const page = await context.newPage()
    let landed: string | undefined
    await page.route("https://app.example.com/**", (route) => {
      landed = route.request().url()
      return route.fulfill({ status: 200, contentType: "text/plain", body: "the app" })
    })
    const { url, checks } = await provider.start(config, "openid email")
    await page.goto(url.href)
    await expect.poll(() => page.url()).toContain("/oauth2/sign-in")
    await page.getByRole("button", { name: "Continue with Acme" }).click()
    // Away to the provider and back to the page, which signs in and goes on to consent.
    await expect.poll(() => page.url(), { timeout: 15_000 }).toContain("/oauth2/consent")
    await page.getByRole("button", { name: "Allow" }).click()
    await expect.poll(() => landed, { timeout: 15_000 }).toBeDefined()
    const tokens = await oidc.authorizationCodeGrant(config, new URL(landed ?? ""), checks)
    expect(tokens.claims()?.email).toBe(email)
    expect(tokens.claims()?.amr).toEqual(["fed"])
    await context.close()
  })

  it("signs a user in by a mailed link asked from the sign-in page, which resumes the request", async () => {
    const config = await provider.configFor(confidential)
    const email = await provider.newUser()
    const context = await (browser as Browser).newContext()
    const page = await context.newPage()
    let landed: string | undefined
    await page.route("https://app.example.com/**", (route) => {
      landed = route.request().url()
      return route.fulfill({ status: 200, contentType: "text/plain", body: "the app" })
    })
    const { url, checks } = await provider.start(config, "openid email")
    await page.goto(url.href)
    await expect.poll(() => page.url()).toContain("/oauth2/sign-in")
    await page.getByLabel("Address to mail a link and a code to").fill(email)
    await page.getByRole("button", { name: "Mail me a link and a code" }).click()
    await expect.poll(() => page.locator("#result-detail").textContent()).toMatch(/on its way/)
    const mail = await provider.run(outbox.signInMail(email))
    // The link as the mail writes it, opened in the same browser.
    await page.goto(
      `${provider.route("/oauth2/sign-in")}?${new URLSearchParams({ request: mail.authorizationRequest ?? "", token: mail.token })}`
    )
    await expect.poll(() => page.url(), { timeout: 15_000 }).toContain("/oauth2/consent")
    await page.getByRole("button", { name: "Allow" }).click()
    await expect.poll(() => landed, { timeout: 15_000 }).toBeDefined()
    const tokens = await oidc.authorizationCodeGrant(config, new URL(landed ?? ""), checks)
    expect(tokens.claims()?.amr).toEqual(["otp"])
    await context.close()
  })

  it("signs a user in and out of the example app (examples/oidc-app), which reads userinfo", async () => {
    const appPort = await TestApp.freePort()
    const appBase = `http://localhost:${appPort}`
    await provider.run(
      Effect.gen(function* () {
        const crypto = yield* Cryptography
        yield* addClient("example-app", {
          name: "Example app",
          secret_digest: crypto.digest("example-app-secret"),
          redirect_uris: [`${appBase}/callback`],
          post_logout_redirect_uris: [`${appBase}/`]
        })
      })
    )
    const app = await createApp({
      issuer: provider.issuer,
      clientId: "example-app",
      clientSecret: "example-app-secret",
      base: appBase,
      insecure: true
    })
    await new Promise<void>((resolve) => app.listen(appPort, "127.0.0.1", resolve))
    try {
      const email = await provider.newUser()
      const context = await (browser as Browser).newContext()
      const page = await context.newPage()
      await page.goto(appBase)
      await page.getByRole("link", { name: "Sign in" }).click()
      await page.getByLabel("Email address", { exact: true }).fill(email)
      await page.getByLabel("Password").fill(password)
      await page.getByRole("button", { name: "Sign in", exact: true }).click()
      await page.getByRole("button", { name: "Allow" }).click()
      await expect.poll(() => page.locator("#email").textContent(), { timeout: 15_000 }).toBe(email)
      await page.getByRole("link", { name: "Sign out" }).click()
      await expect.poll(() => page.locator("#signed-out").isVisible(), { timeout: 15_000 }).toBe(true)
      expect(new URL(page.url()).origin).toBe(new URL(appBase).origin)
      await context.close()
    } finally {
      app.close()
    }
  })

  it("refuses to be framed and runs no inline script (its policy)", async () => {
    const reply = await fetch(provider.route("/oauth2/sign-in?request=x"))
    expect(reply.headers.get("content-security-policy")).toMatch(/frame-ancestors 'none'/)
    expect(reply.headers.get("content-security-policy")).toMatch(/script-src 'self'/)
    expect(reply.headers.get("x-frame-options")).toBe("DENY")
  })
})
