import { describe, expect, it } from "@effect/vitest"
import * as oidc from "openid-client"
import { redirectUri, useProvider } from "../support/openidProvider.js"
import * as TestApp from "../support/TestApp.js"

/**
 * Dynamic client registration (RFC 7591) with OIDC_DYNAMIC_REGISTRATION: openid-client registers
 * a public client and signs a user in with it; what the policy refuses is answered in RFC 7591's
 * shapes; registrations count in their own bucket; off, the route does not exist.
 */

const register = (route: string, body: unknown, headers: Record<string, string> = {}) =>
  fetch(route, {
    method: "POST",
    headers: { "content-type": "application/json", ...headers },
    body: typeof body === "string" ? body : JSON.stringify(body)
  })

for (const backend of TestApp.backends) {
  describe(`dynamic client registration (${backend.name})`, () => {
    const provider = useProvider(backend, {
      env: {
        SERVICE_OIDC_DYNAMIC_REGISTRATION: "true",
        SERVICE_AUTH_RATE_LIMIT_ENABLED: "true",
        SERVICE_AUTH_RATE_LIMITS: JSON.stringify({ oidc_register: "30/hour" })
      }
    })
    const { newUser, browse, start, route } = provider

    it("registers a public client with openid-client, which then signs a user in and refreshes", async () => {
      const server = new URL(provider.issuer)
      const config = await oidc.dynamicClientRegistration(
        server,
        { redirect_uris: [redirectUri], client_name: "An agent", token_endpoint_auth_method: "none" },
        oidc.None(),
        { execute: [oidc.allowInsecureRequests] }
      )
      expect(config.serverMetadata().registration_endpoint).toBe(route("/oauth2/register"))
      const metadata = config.clientMetadata()
      expect(metadata.client_id).toMatch(/^[A-Za-z0-9_-]{22}$/)
      expect(metadata.client_secret).toBeUndefined()
      expect(metadata).toMatchObject({ token_endpoint_auth_method: "none", client_name: "An agent" })

      const email = await newUser()
      const { url, checks } = await start(config, "openid email offline_access")
      const first = await fetch(url, { redirect: "manual" })
      const signInAt = new URL(first.headers.get("location") ?? "")
      expect(signInAt.pathname).toMatch(/\/oauth2\/sign-in$/)
      const { callback } = await browse(url, email)
      const tokens = await oidc.authorizationCodeGrant(config, callback, checks)
      expect(tokens.claims()?.email).toBe(email)
      expect(tokens.refresh_token).toBeDefined()
      const refreshed = await oidc.refreshTokenGrant(config, tokens.refresh_token ?? "")
      expect(refreshed.access_token).not.toBe(tokens.access_token)
    })

    it("says on the consent prompt that the app registered itself, naming where it returns", async () => {
      const reply = await register(route("/oauth2/register"), { redirect_uris: [redirectUri] })
      expect(reply.status).toBe(201)
      const { client_id, client_name } = (await reply.json()) as { client_id: string; client_name: string }
      expect(client_name).toBe("app.example.com")
      const config = new oidc.Configuration(
        (
          await oidc.discovery(new URL(provider.issuer), "x", undefined, oidc.None(), {
            execute: [oidc.allowInsecureRequests]
          })
        ).serverMetadata(),
        client_id,
        undefined,
        oidc.None()
      )
      oidc.allowInsecureRequests(config)
      const email = await newUser()
      const { url } = await start(config, "openid")
      const first = await fetch(url, { redirect: "manual" })
      const request = new URL(first.headers.get("location") ?? "").searchParams.get("request") ?? ""
      const signedIn = await fetch(route("/oauth2/session"), {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ email, password: "correct horse battery staple", request })
      })
      expect(signedIn.status).toBe(200)
      const cookie = (signedIn.headers.getSetCookie?.() ?? []).map((line) => line.split(";")[0]).join("; ")
      const prompt = await fetch(route(`/oauth2/consent?request=${request}`), {
        headers: { cookie, accept: "application/json" }
      })
      expect(await prompt.json()).toMatchObject({
        client_name: "app.example.com",
        self_registered: true,
        redirect_host: "app.example.com"
      })
    })

    it("refuses what the policy does not allow, in RFC 7591's shapes, storing nothing", async () => {
      const refusals: ReadonlyArray<readonly [unknown, string]> = [
        [
          { redirect_uris: [redirectUri], token_endpoint_auth_method: "client_secret_basic" },
          "invalid_client_metadata"
        ],
        [{ redirect_uris: [redirectUri], grant_types: ["client_credentials"] }, "invalid_client_metadata"],
        [{ redirect_uris: [redirectUri], response_types: ["token"] }, "invalid_client_metadata"],
        [{ redirect_uris: ["http://app.example.com/cb"] }, "invalid_redirect_uri"],
        [{ redirect_uris: ["com.example.app:/cb"] }, "invalid_redirect_uri"],
        [{ redirect_uris: ["https://app.example.com/cb#x"] }, "invalid_redirect_uri"],
        [{ redirect_uris: [] }, "invalid_redirect_uri"],
        [{}, "invalid_redirect_uri"],
        [[redirectUri], "invalid_client_metadata"],
        ["{not json", "invalid_client_metadata"]
      ]
      for (const [body, error] of refusals) {
        const reply = await register(route("/oauth2/register"), body)
        expect(reply.status, JSON.stringify(body)).toBe(400)
        expect(((await reply.json()) as { error: string }).error, JSON.stringify(body)).toBe(error)
        expect(reply.headers.get("access-control-allow-origin")).toBe("*")
      }
      const form = await fetch(route("/oauth2/register"), {
        method: "POST",
        headers: { "content-type": "application/x-www-form-urlencoded" },
        body: "redirect_uris=https://app.example.com/cb"
      })
      expect(form.status).toBe(400)
    })

    it("counts registrations per client address: past the bucket, 429 in OAuth's shape", async () => {
      // The suite's earlier registrations and refusals counted too: at most 30 in all.
      let last: Response | undefined
      for (let n = 0; n < 31; n++) {
        last = await register(route("/oauth2/register"), { redirect_uris: ["http://127.0.0.1/cb"] })
        if (last.status === 429) break
      }
      if (last === undefined) throw new Error("no registration was answered")
      expect(last.status).toBe(429)
      expect(((await last.json()) as { error: string }).error).toBe("temporarily_unavailable")
      expect(last.headers.get("retry-after")).toMatch(/^\d+$/)
    })
  })
}

for (const backend of TestApp.backends.slice(0, 1))
  describe(`dynamic client registration off, the default (${backend.name})`, () => {
    const provider = useProvider(backend)
    it("serves no registration route and advertises none", async () => {
      const reply = await register(provider.route("/oauth2/register"), { redirect_uris: [redirectUri] })
      expect(reply.status).toBe(404)
      const discovery = (await (await fetch(`${provider.issuer}/.well-known/openid-configuration`)).json()) as Record<
        string,
        unknown
      >
      expect(discovery.registration_endpoint).toBeUndefined()
    })
  })
