import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import * as oidc from "openid-client"
import { signIn } from "../support/flows.js"
import { makeOutbox } from "../support/Outbox.js"
import { confidential, loggedOut, publicClient, redirectUri, useProvider } from "../support/openidProvider.js"
import { parseSamples, sampleOf } from "../support/prometheus.js"
import * as TestApp from "../support/TestApp.js"

/**
 * Portcullis as an OpenID Provider driven by openid-client (the certified relying-party library)
 * over real HTTP: discovery, code + PKCE with a confidential and a public client, the ID token
 * validated by the library (signature by the JWKS, nonce, iss), userinfo by GET and POST, refresh
 * with rotation and reuse detection, revocation, introspection and end-session. The browser's part
 * (sign-in, consent) is played over HTTP against the JSON routes the hosted pages call.
 */

for (const backend of TestApp.backends) {
  describe(`the OpenID Provider with openid-client (${backend.name})`, () => {
    const outbox = makeOutbox()
    const provider = useProvider(backend, { deployment: { events: outbox.handlers } })
    const { configFor, newUser, browse, start } = provider

    it("publishes discovery at both paths, naming what it supports", async () => {
      const config = await configFor(confidential)
      const metadata = config.serverMetadata()
      expect(metadata.issuer).toBe(provider.issuer)
      expect(metadata.code_challenge_methods_supported).toEqual(["S256"])
      expect(metadata.authorization_response_iss_parameter_supported).toBe(true)
      const rfc8414 = await fetch(`${provider.base}/.well-known/oauth-authorization-server`)
      expect(await rfc8414.json()).toEqual(metadata)
      const jwks = (await (await fetch(metadata.jwks_uri ?? "")).json()) as { keys: Array<{ kty: string }> }
      expect(jwks.keys.some((key) => key.kty === "RSA")).toBe(true)
    })

    it("signs a user in with code + PKCE for a confidential client, then userinfo, refresh, reuse and introspection", async () => {
      const config = await configFor(confidential)
      const email = await newUser()
      const { url, checks } = await start(config, "openid email offline_access")
      const { callback } = await browse(url, email)
      expect(callback.searchParams.get("iss")).toBe(provider.issuer)
      const tokens = await oidc.authorizationCodeGrant(config, callback, { ...checks, idTokenExpected: true })
      const claims = tokens.claims()
      expect(claims?.email).toBe(email)
      expect(claims?.amr).toEqual(["pwd"])
      expect(tokens.refresh_token).toBeDefined()
      const sub = claims?.sub ?? ""

      const byGet = await oidc.fetchUserInfo(config, tokens.access_token, sub)
      expect(byGet.email).toBe(email)
      const byPost = await fetch(`${provider.base}${provider.authPrefix}/oauth2/userinfo`, {
        method: "POST",
        headers: { authorization: `Bearer ${tokens.access_token}` }
      })
      expect(((await byPost.json()) as { email: string }).email).toBe(email)

      const introspected = await oidc.tokenIntrospection(config, tokens.access_token)
      expect(introspected).toMatchObject({ active: true, sub, client_id: confidential.id })

      const refreshed = await oidc.refreshTokenGrant(config, tokens.refresh_token ?? "")
      expect(refreshed.refresh_token).not.toBe(tokens.refresh_token)
      // The first refresh token again: reuse, and the grant ends with every token of it.
      await expect(oidc.refreshTokenGrant(config, tokens.refresh_token ?? "")).rejects.toMatchObject({
        error: "invalid_grant"
      })
      await expect(oidc.refreshTokenGrant(config, refreshed.refresh_token ?? "")).rejects.toMatchObject({
        error: "invalid_grant"
      })
      await expect(oidc.fetchUserInfo(config, refreshed.access_token, sub)).rejects.toBeDefined()
      expect(await oidc.tokenIntrospection(config, refreshed.access_token)).toEqual({ active: false })
    })

    it("serves a public client with PKCE and no secret; a code is good once", async () => {
      const config = await configFor(publicClient)
      const email = await newUser()
      const { url, checks } = await start(config, "openid email")
      const { callback } = await browse(url, email)
      const tokens = await oidc.authorizationCodeGrant(config, callback, checks)
      expect(tokens.claims()?.email).toBe(email)
      // openid without offline_access: no refresh token (OIDC Core §11).
      expect(tokens.refresh_token).toBeUndefined()
      await expect(oidc.authorizationCodeGrant(config, callback, checks)).rejects.toMatchObject({
        error: "invalid_grant"
      })
      // The replayed code ended what its first use issued.
      await expect(oidc.fetchUserInfo(config, tokens.access_token, tokens.claims()?.sub ?? "")).rejects.toBeDefined()
    })

    it("revokes a refresh token: its grant's tokens are refused from then on", async () => {
      const config = await configFor(confidential)
      const email = await newUser()
      const { url, checks } = await start(config, "openid offline_access")
      const { callback } = await browse(url, email)
      const tokens = await oidc.authorizationCodeGrant(config, callback, checks)
      await oidc.tokenRevocation(config, tokens.refresh_token ?? "")
      await expect(oidc.refreshTokenGrant(config, tokens.refresh_token ?? "")).rejects.toMatchObject({
        error: "invalid_grant"
      })
      expect(await oidc.tokenIntrospection(config, tokens.access_token)).toEqual({ active: false })
    })

    it("asks a confidential client's consent once, and signs out through end-session to a registered URI only", async () => {
      const config = await configFor(confidential)
      const email = await newUser()
      const first = await start(config, "openid email")
      const { callback, jar } = await browse(first.url, email)
      const tokens = await oidc.authorizationCodeGrant(config, callback, first.checks)
      // The owner hears of the app let in, once.
      const [, notice] = await Effect.runPromise(outbox.next("send_security_notice", email))
      expect(notice).toMatchObject({ kind: "app_allowed", subject: "Team wiki" })
      // Signed in and consented: the next authorization goes straight back with a code.
      const again = await start(config, "openid email")
      const straight = await fetch(again.url, { redirect: "manual", headers: { cookie: jar.header } })
      expect(straight.status).toBe(303)
      const back = new URL(straight.headers.get("location") ?? "")
      expect(`${back.origin}${back.pathname}`).toBe(redirectUri)
      expect(back.searchParams.get("code")).not.toBeNull()
      expect(await Effect.runPromise(outbox.count("send_security_notice", email))).toBe(1)

      const unregistered = oidc.buildEndSessionUrl(config, {
        id_token_hint: tokens.id_token ?? "",
        post_logout_redirect_uri: "https://evil.example.com/"
      })
      const refused = await fetch(unregistered, { redirect: "manual", headers: { cookie: jar.header } })
      expect(refused.status).toBe(400)
      expect(refused.headers.get("location")).toBeNull()

      const endUrl = oidc.buildEndSessionUrl(config, {
        id_token_hint: tokens.id_token ?? "",
        post_logout_redirect_uri: loggedOut,
        state: "bye"
      })
      const ended = await fetch(endUrl, { redirect: "manual", headers: { cookie: jar.header } })
      expect(ended.status).toBe(303)
      expect(ended.headers.get("location")).toBe(`${loggedOut}?state=bye`)
      // The browser's session ended: an authorization now asks for a sign-in again.
      const after = await start(config, "openid email")
      const signIn = await fetch(after.url, { redirect: "manual", headers: { cookie: jar.header } })
      expect(new URL(signIn.headers.get("location") ?? "").pathname).toBe(`${provider.authPrefix}/oauth2/sign-in`)
    })

    it("answers token errors in OAuth's shape with no-store, and CORS * for any page", async () => {
      const reply = await fetch(`${provider.base}${provider.authPrefix}/oauth2/token`, {
        method: "POST",
        headers: { "content-type": "application/x-www-form-urlencoded", origin: "https://any.example" },
        body: "grant_type=authorization_code&code=nope&client_id=wiki&client_secret=wrong"
      })
      expect(reply.status).toBe(401)
      expect(reply.headers.get("cache-control")).toBe("no-store")
      expect(reply.headers.get("access-control-allow-origin")).toBe("*")
      expect(reply.headers.get("access-control-allow-credentials")).toBeNull()
      expect(await reply.json()).toMatchObject({ error: "invalid_client" })
      const preflight = await fetch(`${provider.base}${provider.authPrefix}/oauth2/token`, {
        method: "OPTIONS",
        headers: { origin: "https://any.example", "access-control-request-method": "POST" }
      })
      expect(preflight.status).toBe(204)
      expect(preflight.headers.get("access-control-allow-origin")).toBe("*")
      expect(preflight.headers.get("access-control-allow-methods")).toBe("POST")
      const json = await fetch(`${provider.base}${provider.authPrefix}/oauth2/token`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: "{}"
      })
      expect(json.status).toBe(400)
      expect(json.headers.get("content-type")).toMatch(/^application\/json/)
      expect(await json.json()).toMatchObject({ error: "invalid_request" })
    })

    it("lists the apps a user let in, and a withdrawal ends the app's grant", async () => {
      const config = await configFor(confidential)
      const email = await newUser()
      const { url, checks } = await start(config, "openid email offline_access")
      const { callback } = await browse(url, email)
      const tokens = await oidc.authorizationCodeGrant(config, callback, checks)
      const own = await provider.run(signIn(email))
      const listed = await fetch(provider.route("/me/apps"), { headers: { authorization: `Bearer ${own.access}` } })
      expect(await listed.json()).toEqual([
        expect.objectContaining({
          client_id: confidential.id,
          name: "Team wiki",
          scopes: ["openid", "email", "offline_access"]
        })
      ])
      const withdrawn = await fetch(provider.route(`/me/apps/${confidential.id}`), {
        method: "DELETE",
        headers: { authorization: `Bearer ${own.access}` }
      })
      expect(withdrawn.status).toBe(204)
      await expect(oidc.refreshTokenGrant(config, tokens.refresh_token ?? "")).rejects.toMatchObject({
        error: "invalid_grant"
      })
      const after = await fetch(provider.route("/me/apps"), { headers: { authorization: `Bearer ${own.access}` } })
      expect(await after.json()).toEqual([])
    })

    it("asks before signing out without a hint, the confirmation bound to the browser's session", async () => {
      const config = await configFor(confidential)
      const { url, checks } = await start(config, "openid")
      const { callback, jar } = await browse(url, await newUser())
      await oidc.authorizationCodeGrant(config, callback, checks)
      const asked = await fetch(provider.route("/oauth2/end-session"), { headers: { cookie: jar.header } })
      expect(asked.status).toBe(200)
      const page = await asked.text()
      const csrf = /name="csrf" value="([^"]+)"/.exec(page)?.[1] ?? ""
      expect(csrf).not.toBe("")
      const post = (fields: Record<string, string>) =>
        fetch(provider.route("/oauth2/end-session"), {
          method: "POST",
          redirect: "manual",
          headers: { "content-type": "application/x-www-form-urlencoded", cookie: jar.header },
          body: new URLSearchParams(fields)
        })
      expect((await post({ confirm: "yes", csrf: "forged.value" })).status).toBe(403)
      const confirmed = await post({ confirm: "yes", csrf })
      expect(confirmed.status).toBe(200)
      jar.take(confirmed.headers)
      expect(jar.cookies.has("portcullis_op")).toBe(false)
      const again = await start(config, "openid")
      const reply = await fetch(again.url, { redirect: "manual", headers: { cookie: jar.header } })
      expect(new URL(reply.headers.get("location") ?? "").pathname).toBe(`${provider.authPrefix}/oauth2/sign-in`)
    })
  })
}

describe("the provider's refusals by the pipeline, in OAuth's shape", () => {
  const provider = useProvider(
    { name: "memory", databaseUrl: "memory:" },
    {
      env: {
        SERVICE_AUTH_RATE_LIMIT_ENABLED: "true",
        SERVICE_AUTH_RATE_LIMITS: JSON.stringify({ oidc_token: "2/minute" })
      }
    }
  )

  it("answers a rate limit and an oversized body as {error, error_description}, never problem+json", async () => {
    const send = (body: string) =>
      fetch(provider.route("/oauth2/token"), {
        method: "POST",
        headers: { "content-type": "application/x-www-form-urlencoded" },
        body
      })
    const tooLarge = await send(`grant_type=client_credentials&pad=${"x".repeat(70 * 1024)}`)
    expect(tooLarge.status).toBe(413)
    expect(tooLarge.headers.get("content-type")).toMatch(/^application\/json/)
    expect(await tooLarge.json()).toMatchObject({ error: "invalid_request", error_description: expect.any(String) })
    let limited: Response | undefined
    for (let attempt = 0; attempt < 4 && limited === undefined; attempt++) {
      const reply = await send("grant_type=client_credentials&client_id=wiki&client_secret=wrong")
      if (reply.status === 429) limited = reply
    }
    expect(limited?.headers.get("retry-after")).not.toBeNull()
    expect(limited?.headers.get("content-type")).toMatch(/^application\/json/)
    expect(await limited?.json()).toMatchObject({ error: "temporarily_unavailable" })
  })
})

describe("the provider's metrics (METRICS_ENABLED=true)", () => {
  const provider = useProvider({ name: "memory", databaseUrl: "memory:" }, { env: { SERVICE_METRICS_ENABLED: "true" } })
  const scrape = async () => parseSamples(await (await fetch(`${provider.base}/metrics`)).text())

  it("counts authorizations by outcome, token grants by type and refusals by error", async () => {
    const series = [
      ["portcullis_oidc_authorizations_total", { outcome: "sign_in" }],
      ["portcullis_oidc_authorizations_total", { outcome: "error_page" }],
      ["portcullis_oidc_token_grants_total", { grant_type: "authorization_code" }],
      ["portcullis_oidc_refusals_total", { error: "invalid_grant" }]
    ] as const
    const before = await scrape()
    const config = await provider.configFor(confidential)
    const { url, checks } = await provider.start(config, "openid email")
    const { callback } = await provider.browse(url, await provider.newUser())
    await oidc.authorizationCodeGrant(config, callback, checks)
    await expect(oidc.authorizationCodeGrant(config, callback, checks)).rejects.toMatchObject({
      error: "invalid_grant"
    })
    url.searchParams.set("redirect_uri", "https://evil.example/cb")
    expect((await fetch(url, { redirect: "manual" })).status).toBe(400)
    const after = await scrape()
    expect(series.map(([name, labels]) => sampleOf(after, name, labels) - sampleOf(before, name, labels))).toEqual([
      1, 1, 1, 1
    ])
  })
})
