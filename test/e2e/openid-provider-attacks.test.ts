import { describe, expect, it } from "@effect/vitest"
import * as oidc from "openid-client"
import { signIn as portcullisSignIn } from "../support/flows.js"
import { allowParked, confidential, Jar, publicClient, redirectUri, useProvider } from "../support/openidProvider.js"
import * as TestApp from "../support/TestApp.js"

/**
 * The attacks the provider must withstand, black-box over real HTTP: a code taken to another
 * client, redirect URIs that only look registered, PKCE left out or weakened, tokens of one kind
 * presented where the other kind is taken, a stolen Portcullis access token trying to become a
 * browser session, consent without the session's CSRF binding, framing, and a foreign page
 * posting to the browser-bound routes.
 */

/** Each looks like `https://app.example.com/cb` and is another URI (RFC 9700 §4.1.3: exact matching). */
const lookalikes = [
  "https://app.example.com/c",
  "https://app.example.com/",
  "https://app.example.com/cb/",
  "https://app.example.com/cb/x",
  "https://app.example.com/cbx",
  "https://app.example.com/cb?x=1",
  "https://app.example.com/cb.evil.example",
  "https://APP.example.com/cb",
  "HTTPS://app.example.com/cb",
  "https://app.example.com/CB",
  "https://app.example.com/%63b",
  "https%3A%2F%2Fapp.example.com%2Fcb",
  "https://app.example.com/cb%2F..%2Fevil",
  "https://evil.example@app.example.com/cb",
  "https://app.example.com@evil.example/cb",
  "https://app.example.com/cb#x",
  "https://app.example.com:8443/cb",
  "http://app.example.com/cb",
  "https://app.example.com/x/../cb"
]

/** Where an answer sends the browser, if anywhere. */
const locationOf = (reply: Response) => {
  const location = reply.headers.get("location")
  return location === null ? undefined : new URL(location)
}

for (const backend of TestApp.backends) {
  describe(`attacks on the OpenID Provider (${backend.name})`, () => {
    const provider = useProvider(backend)
    const { configFor, newUser, browse, start, route } = provider

    /** An authorization URL of the confidential client with its parameters replaced. */
    const authorizationUrl = async (replace: Record<string, string | undefined>) => {
      const { url } = await start(await configFor(confidential), "openid email")
      for (const [name, value] of Object.entries(replace)) {
        if (value === undefined) url.searchParams.delete(name)
        else url.searchParams.set(name, value)
      }
      return url
    }

    it(`never redirects to ${lookalikes.length} look-alikes of a registered redirect URI`, async () => {
      for (const lookalike of lookalikes) {
        const reply = await fetch(await authorizationUrl({ redirect_uri: lookalike }), { redirect: "manual" })
        expect(reply.status, lookalike).toBe(400)
        expect(reply.headers.get("location"), lookalike).toBeNull()
      }
      // The one exception (RFC 8252 §7.3): a loopback URI on any port, for the public client that registered it.
      const { url } = await start(await configFor(publicClient), "openid", {
        redirect_uri: "http://127.0.0.1:51234/cb"
      })
      const loopback = await fetch(url, { redirect: "manual" })
      expect(loopback.status).toBe(303)
      expect(locationOf(loopback)?.pathname).toBe(`${provider.authPrefix}/oauth2/sign-in`)
      // Written unencoded, as a hand-made URL has it: its `//` reaches the rule as sent.
      const raw = url.href.replace(/redirect_uri=[^&]*/, "redirect_uri=http://127.0.0.1:51234/cb")
      expect(raw).toContain("redirect_uri=http://127.0.0.1:51234/cb")
      const unencoded = await fetch(raw, { redirect: "manual" })
      expect(unencoded.status).toBe(303)
      expect(locationOf(unencoded)?.pathname).toBe(`${provider.authPrefix}/oauth2/sign-in`)
    })

    it("refuses an authorization without PKCE or with plain, at the redirect URI with state and iss", async () => {
      for (const change of [
        { code_challenge: undefined, code_challenge_method: undefined },
        { code_challenge_method: "plain" }
      ]) {
        const reply = await fetch(await authorizationUrl({ ...change, state: "s1" }), { redirect: "manual" })
        const back = locationOf(reply)
        expect(`${back?.origin}${back?.pathname}`).toBe(redirectUri)
        expect(back?.searchParams.get("error")).toBe("invalid_request")
        expect(back?.searchParams.get("state")).toBe("s1")
        expect(back?.searchParams.get("iss")).toBe(provider.issuer)
        expect(back?.searchParams.get("code")).toBeNull()
      }
    })

    it("refuses a code with another verifier, and a code taken to another client", async () => {
      const config = await configFor(confidential)
      const email = await newUser()
      const first = await start(config, "openid email")
      const { callback, jar } = await browse(first.url, email)
      await expect(
        oidc.authorizationCodeGrant(config, callback, {
          ...first.checks,
          pkceCodeVerifier: oidc.randomPKCECodeVerifier()
        })
      ).rejects.toMatchObject({ error: "invalid_grant" })

      const second = await start(config, "openid email")
      const { callback: another } = await browse(second.url, email, jar)
      const stolen = await fetch(route("/oauth2/token"), {
        method: "POST",
        headers: { "content-type": "application/x-www-form-urlencoded" },
        body: new URLSearchParams({
          grant_type: "authorization_code",
          code: another.searchParams.get("code") ?? "",
          redirect_uri: redirectUri,
          code_verifier: second.checks.pkceCodeVerifier,
          client_id: publicClient.id
        })
      })
      expect(stolen.status).toBe(400)
      expect(await stolen.json()).toMatchObject({ error: "invalid_grant" })
    })

    it("takes neither kind of token where the other is taken", async () => {
      const config = await configFor(confidential)
      const email = await newUser()
      const { url, checks } = await start(config, "openid email")
      const { callback } = await browse(url, email)
      const tokens = await oidc.authorizationCodeGrant(config, callback, checks)
      const me = await fetch(route("/me"), { headers: { authorization: `Bearer ${tokens.access_token}` } })
      expect(me.status).toBe(401)
      const own = await provider.run(portcullisSignIn(email))
      const userinfo = await fetch(route("/oauth2/userinfo"), { headers: { authorization: `Bearer ${own.access}` } })
      expect(userinfo.status).toBe(401)
      expect(userinfo.headers.get("www-authenticate")).toMatch(/^Bearer error="invalid_token"/)
      const idTokenAsAccess = await fetch(route("/oauth2/userinfo"), {
        headers: { authorization: `Bearer ${tokens.id_token}` }
      })
      expect(idTokenAsAccess.status).toBe(401)
    })

    it("gives a stolen Portcullis access token no browser session and no code", async () => {
      const email = await newUser()
      const own = await provider.run(portcullisSignIn(email))
      const url = await authorizationUrl({})
      const reply = await fetch(url, { redirect: "manual", headers: { authorization: `Bearer ${own.access}` } })
      expect(locationOf(reply)?.pathname).toBe(`${provider.authPrefix}/oauth2/sign-in`)
      const request = locationOf(reply)?.searchParams.get("request") ?? ""
      const session = await fetch(route("/oauth2/session"), {
        method: "POST",
        headers: { "content-type": "application/json", authorization: `Bearer ${own.access}` },
        body: JSON.stringify({ request })
      })
      expect(session.status).toBe(401)
      expect(session.headers.getSetCookie()).toEqual([])
      const consent = await fetch(route("/oauth2/consent"), {
        method: "POST",
        headers: { "content-type": "application/json", authorization: `Bearer ${own.access}` },
        body: JSON.stringify({ request, approve: true })
      })
      expect(consent.status).toBe(401)
    })

    it("refuses a consent without the session's CSRF token, or with another session's", async () => {
      const email = await newUser()
      const url = await authorizationUrl({})
      const parked = locationOf(await fetch(url, { redirect: "manual" }))
      const request = parked?.searchParams.get("request") ?? ""
      const jar = new Jar()
      await provider.signIn(request, email, jar)
      const other = new Jar()
      await provider.signIn(
        locationOf(await fetch(await authorizationUrl({}), { redirect: "manual" }))?.searchParams.get("request") ?? "",
        await newUser(),
        other
      )
      for (const csrf of ["", "forged.value", other.cookies.get("portcullis_op_csrf") ?? ""]) {
        const answered = await fetch(route("/oauth2/consent"), {
          method: "POST",
          headers: { "content-type": "application/json", cookie: jar.header, "x-csrf-token": csrf },
          body: JSON.stringify({ request, approve: true })
        })
        expect(answered.status, csrf).toBe(403)
      }
      // Refused, the request still waits for the user's own answer (allowParked expects its 200).
      await allowParked(route, { request, jar })
    })

    it("refuses a foreign page's post to the browser-bound routes, in bearer mode too", async () => {
      for (const path of ["/oauth2/session", "/oauth2/consent"]) {
        const reply = await fetch(route(path), {
          method: "POST",
          headers: { "content-type": "application/json", origin: "https://evil.example" },
          body: JSON.stringify({ request: "x", approve: true })
        })
        expect(reply.status, path).toBe(403)
      }
    })

    it("refuses to be framed: its pages say so", async () => {
      const errorPage = await fetch(await authorizationUrl({ redirect_uri: "https://evil.example/cb" }))
      const signOut = await fetch(route("/oauth2/end-session"))
      for (const page of [errorPage, signOut]) {
        expect(page.headers.get("x-frame-options")).toBe("DENY")
        expect(page.headers.get("content-security-policy")).toContain("frame-ancestors 'none'")
      }
    })

    it("ends the browser session with the session: a session ended elsewhere signs the browser out", async () => {
      const config = await configFor(confidential)
      const email = await newUser()
      const { url, checks } = await start(config, "openid email")
      const { callback, jar } = await browse(url, email)
      await oidc.authorizationCodeGrant(config, callback, checks)
      const own = await provider.run(portcullisSignIn(email))
      const ended = await fetch(route("/sessions/revoke-others"), {
        method: "POST",
        headers: { authorization: `Bearer ${own.access}` }
      })
      expect(ended.status).toBe(200)
      const again = await start(config, "openid email")
      const reply = await fetch(again.url, { redirect: "manual", headers: { cookie: jar.header } })
      expect(locationOf(reply)?.pathname).toBe(`${provider.authPrefix}/oauth2/sign-in`)
    })
  })
}
