import { describe, expect, it } from "@effect/vitest"
import { confidential, redirectUri, useProvider } from "../support/openidProvider.js"
import * as TestApp from "../support/TestApp.js"

/**
 * @modelcontextprotocol/conformance (0.1.16) has no scenarios for an authorization server: its
 * auth suite plays the server to test MCP clients. What its mock server promises those clients,
 * and what they check of it, is rewritten here against Portcullis (docs/integrating.md lists
 * each): the metadata (RFC 8414 at both paths, issuer, S256, registration, client ID metadata
 * documents) and the code grant (iss and state on the redirect, no-store on the token answer).
 */

for (const backend of TestApp.backends.slice(0, 1))
  describe(`MCP's authorization-server checks, rewritten (${backend.name})`, () => {
    const provider = useProvider(backend, {
      env: { SERVICE_OIDC_DYNAMIC_REGISTRATION: "true", SERVICE_OIDC_CLIENT_METADATA_DOCUMENTS: "true" }
    })

    it("authorization-server-metadata: the same document at RFC 8414's path and OIDC's, naming what MCP clients need", async () => {
      const rfc8414 = await fetch(`${provider.base}/.well-known/oauth-authorization-server`)
      const openid = await fetch(`${provider.base}/.well-known/openid-configuration`)
      expect(rfc8414.status).toBe(200)
      const metadata = (await rfc8414.json()) as Record<string, unknown>
      expect(await openid.json()).toEqual(metadata)
      expect(metadata.issuer).toBe(provider.issuer)
      expect(metadata.code_challenge_methods_supported).toEqual(["S256"])
      expect(metadata.response_types_supported).toEqual(["code"])
      expect(metadata.grant_types_supported).toEqual(expect.arrayContaining(["authorization_code", "refresh_token"]))
      expect(metadata.token_endpoint_auth_methods_supported).toContain("none")
      expect(metadata.registration_endpoint).toBe(provider.route("/oauth2/register"))
      expect(metadata.client_id_metadata_document_supported).toBe(true)
      for (const endpoint of ["authorization_endpoint", "token_endpoint", "registration_endpoint"])
        expect(String(metadata[endpoint]).startsWith(provider.issuer), endpoint).toBe(true)
    })

    it("authorization-request and token-request: iss and state on the redirect, no-store on the tokens", async () => {
      const config = await provider.configFor(confidential)
      const { url, checks } = await provider.start(config, "openid")
      const { callback } = await provider.browse(url, await provider.newUser())
      expect(`${callback.origin}${callback.pathname}`).toBe(redirectUri)
      expect(callback.searchParams.get("iss")).toBe(provider.issuer)
      expect(callback.searchParams.get("state")).toBe(url.searchParams.get("state"))
      const reply = await fetch(provider.route("/oauth2/token"), {
        method: "POST",
        headers: {
          "content-type": "application/x-www-form-urlencoded",
          authorization: `Basic ${Buffer.from(`${confidential.id}:${confidential.secret}`).toString("base64")}`
        },
        body: new URLSearchParams({
          grant_type: "authorization_code",
          code: callback.searchParams.get("code") ?? "",
          redirect_uri: redirectUri,
          code_verifier: checks.pkceCodeVerifier
        })
      })
      expect(reply.status).toBe(200)
      expect(reply.headers.get("cache-control")).toBe("no-store")
      expect((await reply.json()) as Record<string, unknown>).toMatchObject({ token_type: "Bearer" })
      // A refused token request is no-store too.
      const refused = await fetch(provider.route("/oauth2/token"), {
        method: "POST",
        headers: { "content-type": "application/x-www-form-urlencoded" },
        body: "grant_type=authorization_code&code=nope&client_id=cli-tool"
      })
      expect(refused.status).toBe(400)
      expect(refused.headers.get("cache-control")).toBe("no-store")
    })

    it("pkce: an authorization request without S256 is refused, at the redirect, with state and iss", async () => {
      const config = await provider.configFor(confidential)
      const { url } = await provider.start(config, "openid")
      url.searchParams.delete("code_challenge")
      url.searchParams.delete("code_challenge_method")
      const reply = await fetch(url, { redirect: "manual" })
      const location = new URL(reply.headers.get("location") ?? "")
      expect(location.searchParams.get("error")).toBe("invalid_request")
      expect(location.searchParams.get("state")).toBe(url.searchParams.get("state"))
      expect(location.searchParams.get("iss")).toBe(provider.issuer)
    })
  })
