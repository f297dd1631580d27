import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { Effect, Exit, Scope } from "effect"
import * as oidc from "openid-client"
import { customProviderOn, type FakeOAuthProvider, fakeOAuthProvider } from "../support/FakeOAuthProvider.js"
import { uniqueEmail } from "../support/flows.js"
import { makeOutbox } from "../support/Outbox.js"
import { confidential, Jar, useProvider } from "../support/openidProvider.js"
import * as TestApp from "../support/TestApp.js"

/**
 * The provider's sign-in takes every way in the deployment has: here, a social provider that
 * returns to the sign-in page (amr `fed`), black-box over HTTP as the page's script drives it.
 */

const acme = { id: "acme-client", secret: "acme-secret" }
const scope = Scope.make().pipe(Effect.runSync)
let fake: FakeOAuthProvider | undefined

const fakeNow = () => {
  if (fake === undefined) throw new Error("the fake provider is not running")
  return fake
}

/** A custom provider `name` on the fake, returning to `redirectUris`. */
const customProvider = (name: string, redirectUris: ReadonlyArray<string>) =>
  customProviderOn(fakeNow(), name, acme, redirectUris)

// The flow is the provider's and the page's; one backend of the chosen ones carries it.
for (const backend of TestApp.backends.slice(0, 1))
  describe(`a social provider on the OpenID Provider's sign-in page (${backend.name})`, () => {
    beforeAll(async () => {
      fake = await Effect.runPromise(Scope.extend(fakeOAuthProvider([acme]), scope))
    })
    afterAll(() => Effect.runPromise(Scope.close(scope, Exit.void)))

    const provider = useProvider(backend, {
      env: (base) => ({
        SERVICE_OAUTH_CUSTOM_PROVIDERS: JSON.stringify([
          customProvider("acme", [`${base}/api/v1/auth/oauth2/sign-in`]),
          // Registered for the app's own callback only: the provider's page cannot offer it.
          customProvider("elsewhere", ["https://app.example.com/social"])
        ])
      })
    })
    const { configFor, start, route, allow } = provider
    const signInPage = () => route("/oauth2/sign-in")

    /** An authorization parked for sign-in: its request id. */
    const parked = async (jar: Jar, extra: Record<string, string> = {}) => {
      const { url, checks } = await start(await configFor(confidential), "openid email", extra)
      const first = await fetch(url, { redirect: "manual", headers: { cookie: jar.header } })
      const location = new URL(first.headers.get("location") ?? "")
      expect(location.pathname).toBe(new URL(signInPage()).pathname)
      return { request: location.searchParams.get("request") ?? "", checks }
    }

    /** The page's start of the provider's flow, and the provider's user approving it: what comes back. */
    const throughProvider = async (name: string, who: { uid: string; mail: string }) => {
      const started = await fetch(route(`/oauth/${name}/authorize?redirect_uri=${encodeURIComponent(signInPage())}`))
      expect(started.status).toBe(200)
      const { authorization_url, binding } = (await started.json()) as { authorization_url: string; binding: string }
      const authorization = new URL(authorization_url)
      expect(authorization.searchParams.get("redirect_uri")).toBe(signInPage())
      const code = fakeNow().issueCode({
        clientId: acme.id,
        redirectUri: signInPage(),
        userinfo: { uid: who.uid, mail: who.mail, mail_ok: true, display: "Ada" },
        codeChallenge: authorization.searchParams.get("code_challenge") ?? ""
      })
      return { provider: name, code, state: authorization.searchParams.get("state") ?? "", binding }
    }

    const session = (body: Record<string, unknown>, jar = new Jar()) =>
      fetch(route("/oauth2/session"), {
        method: "POST",
        headers: { "content-type": "application/json", cookie: jar.header },
        body: JSON.stringify(body)
      }).then((reply) => {
        jar.take(reply.headers)
        return reply
      })

    it("offers the providers that return to the page, and only those", async () => {
      const html = await (await fetch(`${signInPage()}?request=x`)).text()
      expect(html).toContain('data-provider="acme"')
      expect(html).toContain("Continue with Acme")
      expect(html).not.toContain('data-provider="elsewhere"')
      expect(html).toContain(`data-sign-in-url="${signInPage()}"`)
    })

    it("signs in through the provider, resumes the request, and the ID token says fed", async () => {
      const jar = new Jar()
      const { request, checks } = await parked(jar)
      const mail = uniqueEmail("social")
      const signedIn = await session({ request, ...(await throughProvider("acme", { uid: `u-${mail}`, mail })) }, jar)
      expect(signedIn.status, await signedIn.clone().text()).toBe(200)
      const consent = new URL(((await signedIn.json()) as { continue: string }).continue)
      expect(consent.pathname).toMatch(/\/oauth2\/consent$/)
      const callback = await allow(request, jar)
      const tokens = await oidc.authorizationCodeGrant(await configFor(confidential), callback, checks)
      const claims = tokens.claims()
      expect(claims?.amr).toEqual(["fed"])
      expect(claims?.email).toBe(mail)
      expect(claims?.email_verified).toBe(true)
    })

    it("refuses a provider's code twice, and a state another flow began", async () => {
      const jar = new Jar()
      const { request } = await parked(jar)
      const mail = uniqueEmail("social")
      const returned = await throughProvider("acme", { uid: `u-${mail}`, mail })
      expect((await session({ request, ...returned }, jar)).status).toBe(200)
      const again = await parked(new Jar())
      const replayed = await session({ request: again.request, ...returned })
      expect(replayed.status).toBe(400)
      expect(replayed.headers.get("set-cookie")).toBeNull()
      const other = await throughProvider("acme", { uid: `u-${mail}`, mail })
      const mixed = await session({ request: again.request, ...other, binding: returned.binding })
      expect(mixed.status).toBe(400)
      expect(mixed.headers.get("content-type")).toMatch(/problem\+json/)
    })

    it("answers an unknown provider 404 and a request no longer parked 410, signing nobody in", async () => {
      const { request } = await parked(new Jar())
      const unknown = await session({ request, provider: "nope", code: "c", state: "s", binding: "b" })
      expect(unknown.status).toBe(404)
      const mail = uniqueEmail("social")
      const gone = await session({
        request: "not-a-parked-request",
        ...(await throughProvider("acme", { uid: "x", mail }))
      })
      expect(gone.status).toBe(410)
      expect(gone.headers.get("set-cookie")).toBeNull()
    })
  })

for (const backend of TestApp.backends.slice(0, 1))
  describe(`a mailed link asked from the OpenID Provider's sign-in page (${backend.name})`, () => {
    const outbox = makeOutbox()
    const provider = useProvider(backend, {
      env: { SERVICE_EMAIL_SIGN_IN_ENABLED: "true" },
      deployment: { events: outbox.handlers }
    })
    const { configFor, start, route, newUser, run, allow } = provider

    const post = (path: string, body: unknown, jar = new Jar()) =>
      fetch(route(path), {
        method: "POST",
        headers: { "content-type": "application/json", cookie: jar.header },
        body: JSON.stringify(body)
      }).then((reply) => {
        jar.take(reply.headers)
        return reply
      })

    it("mails a link naming the request, which resumes it on the sign-in page (amr otp)", async () => {
      const email = await newUser()
      const { url, checks } = await start(await configFor(confidential), "openid email")
      const jar = new Jar()
      const first = await fetch(url, { redirect: "manual" })
      const request = new URL(first.headers.get("location") ?? "").searchParams.get("request") ?? ""
      const asked = await post("/oauth2/email-sign-in", { request, email })
      expect(asked.status).toBe(202)
      const mail = await run(outbox.signInMail(email))
      expect(mail.authorizationRequest).toBe(request)
      // What the link opens: the page with the request and the token, whose script posts them.
      const page = await fetch(`${route("/oauth2/sign-in")}?request=${request}&token=${mail.token}`)
      expect(page.status).toBe(200)
      const signedIn = await post("/oauth2/session", { request, token: mail.token }, jar)
      expect(signedIn.status).toBe(200)
      const consent = new URL(((await signedIn.json()) as { continue: string }).continue)
      expect(consent.pathname).toMatch(/\/oauth2\/consent$/)
      const callback = await allow(request, jar)
      const tokens = await oidc.authorizationCodeGrant(await configFor(confidential), callback, checks)
      expect(tokens.claims()?.amr).toEqual(["otp"])
      expect(tokens.claims()?.email).toBe(email)
    })

    it("refuses to mail for a request that is not waiting, and mails nobody", async () => {
      const email = await newUser()
      const gone = await post("/oauth2/email-sign-in", { request: "not-a-parked-request", email })
      expect(gone.status).toBe(410)
      expect(await run(outbox.count("send_sign_in_email", email))).toBe(0)
    })

    it("answers an unknown address as a known one (202), and a malformed one 422", async () => {
      const { url } = await start(await configFor(confidential), "openid")
      const request = new URL(
        (await fetch(url, { redirect: "manual" })).headers.get("location") ?? ""
      ).searchParams.get("request")
      const unknown = await post("/oauth2/email-sign-in", { request, email: uniqueEmail("nobody") })
      expect(unknown.status).toBe(202)
      const malformed = await post("/oauth2/email-sign-in", { request, email: "not an address" })
      expect(malformed.status).toBe(422)
    })
  })

for (const backend of TestApp.backends.slice(0, 1))
  describe(`the provider's mail route with sign-in by mail off (${backend.name})`, () => {
    const { configFor, start, route } = useProvider(backend)
    it("answers 422 and mails nothing", async () => {
      const { url } = await start(await configFor(confidential), "openid")
      const request = new URL(
        (await fetch(url, { redirect: "manual" })).headers.get("location") ?? ""
      ).searchParams.get("request")
      const reply = await fetch(route("/oauth2/email-sign-in"), {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ request, email: uniqueEmail("off") })
      })
      expect(reply.status).toBe(422)
      expect(((await reply.json()) as { detail: string }).detail).toMatch(/off/)
    })
  })

for (const backend of TestApp.backends.slice(0, 1))
  describe(`the provider's pages with LOGO_URL (${backend.name})`, () => {
    const { route } = useProvider(backend, {
      env: { SERVICE_LOGO_URL: "https://cdn.example.com/brand/logo.svg?v=2&x=<b>", SERVICE_PRODUCT_NAME: "Acme ID" }
    })
    it("shows the logo above the product's name, and allows images from its origin only", async () => {
      for (const page of ["/oauth2/sign-in?request=x", "/oauth2/consent?request=x"]) {
        const reply = await fetch(route(page), { headers: { accept: "text/html" } })
        const html = await reply.text()
        expect(html).toContain(
          '<img class="logo" src="https://cdn.example.com/brand/logo.svg?v=2&amp;x=%3Cb%3E" alt="">'
        )
        expect(html).toContain('<p class="product">Acme ID</p>')
        const policy = reply.headers.get("content-security-policy") ?? ""
        expect(policy).toMatch(/img-src https:\/\/cdn\.example\.com(;|$)/)
        expect(policy).toMatch(/default-src 'none'/)
      }
    })
  })
