import { describe, expect, it } from "@effect/vitest"
import { DateTime, Effect } from "effect"
import { decodeJwt } from "jose"
import * as oidc from "openid-client"
import { OidcResources } from "../../application/ports/OidcResources.js"
import { confidential, useProvider } from "../support/openidProvider.js"
import * as TestApp from "../support/TestApp.js"

/**
 * Resource indicators (RFC 8707) black-box with openid-client: `resource` on the authorization
 * and token requests, the access token's `aud` bound to it, narrowing allowed and widening
 * refused (`invalid_target`), refresh tokens bound to the grant's resources, a resource's own
 * scopes, and introspection by the resource's own client.
 */

const mcp = "https://mcp.example.com/mcp"
const reports = "https://reports.example.com"
const gateway = { id: "gateway", secret: "gateway-secret-for-introspection" }
const other = { id: "other", secret: "other-client-secret-of-the-suite" }

for (const backend of TestApp.backends) {
  describe(`resource indicators on the OpenID Provider (${backend.name})`, () => {
    const provider = useProvider(backend, { more: [gateway, other] })
    const { configFor, newUser, browse, start, run } = provider
    let registered = false

    const register = async () => {
      if (registered) return
      registered = true
      await run(
        Effect.gen(function* () {
          const resources = yield* OidcResources
          const at = DateTime.unsafeMake(0)
          yield* resources.add({ uri: mcp, scopes: ["mcp:tools"], introspecting_client: gateway.id, created_at: at })
          yield* resources.add({ uri: reports, scopes: [], introspecting_client: null, created_at: at })
        })
      )
    }

    /** An authorization of the confidential client naming `resources`, consented; its callback and checks. */
    const authorized = async (scope: string, resources: ReadonlyArray<string>) => {
      await register()
      const config = await configFor(confidential)
      const { url, checks } = await start(config, scope)
      for (const resource of resources) url.searchParams.append("resource", resource)
      const { callback } = await browse(url, await newUser())
      return { config, callback, checks }
    }

    const audOf = (token: string) => decodeJwt(token).aud

    it("binds the access token's aud to the resource named, through refresh", async () => {
      const { config, callback, checks } = await authorized("openid offline_access mcp:tools", [`${mcp}/`])
      const tokens = await oidc.authorizationCodeGrant(config, callback, checks)
      expect(audOf(tokens.access_token)).toBe(mcp)
      expect(tokens.scope?.split(" ")).toContain("mcp:tools")
      // The ID token stays the client's.
      expect(tokens.claims()?.aud).toBe(confidential.id)
      const refreshed = await oidc.refreshTokenGrant(config, tokens.refresh_token ?? "")
      expect(audOf(refreshed.access_token)).toBe(mcp)
      // A refresh may name the grant's resource, never another.
      const named = await oidc.refreshTokenGrant(config, refreshed.refresh_token ?? "", { resource: mcp })
      expect(audOf(named.access_token)).toBe(mcp)
      await expect(
        oidc.refreshTokenGrant(config, named.refresh_token ?? "", { resource: reports })
      ).rejects.toMatchObject({ error: "invalid_target" })
      // Refused before the rotation: the token is still good.
      const after = await oidc.refreshTokenGrant(config, named.refresh_token ?? "")
      expect(audOf(after.access_token)).toBe(mcp)
    })

    it("narrows two resources to one at the token endpoint; a code request that widens leaves the code good", async () => {
      const { config, callback, checks } = await authorized("openid", [mcp, reports])
      await expect(
        oidc.authorizationCodeGrant(config, callback, checks, { resource: "https://elsewhere.example.com" })
      ).rejects.toMatchObject({ error: "invalid_target" })
      const tokens = await oidc.authorizationCodeGrant(config, callback, checks, { resource: reports })
      expect(audOf(tokens.access_token)).toBe(reports)
    })

    it("names both resources in aud when a token request names none; without a resource, aud is the client", async () => {
      const both = await authorized("openid", [mcp, reports])
      const tokens = await oidc.authorizationCodeGrant(both.config, both.callback, both.checks)
      expect(audOf(tokens.access_token)).toEqual([mcp, reports])
      const none = await authorized("openid mcp:tools", [])
      const plain = await oidc.authorizationCodeGrant(none.config, none.callback, none.checks)
      expect(audOf(plain.access_token)).toBe(confidential.id)
      // A resource's scope is granted only with its resource.
      expect(plain.scope?.split(" ")).not.toContain("mcp:tools")
    })

    it("redirects invalid_target for a resource not registered or not a URI, with state and iss", async () => {
      await register()
      const config = await configFor(confidential)
      for (const resource of ["https://unknown.example.com/api", `${mcp}#fragment`, "mcp.example.com"]) {
        const { url } = await start(config, "openid")
        url.searchParams.append("resource", resource)
        const reply = await fetch(url, { redirect: "manual" })
        expect(reply.status, resource).toBe(303)
        const location = new URL(reply.headers.get("location") ?? "")
        expect(`${location.origin}${location.pathname}`).toBe("https://app.example.com/cb")
        expect(location.searchParams.get("error")).toBe("invalid_target")
        expect(location.searchParams.get("state")).toBe(url.searchParams.get("state"))
        expect(location.searchParams.get("iss")).toBe(provider.issuer)
      }
    })

    it("lets the resource's own client introspect its tokens, and no other client", async () => {
      const { config, callback, checks } = await authorized("openid", [mcp])
      const tokens = await oidc.authorizationCodeGrant(config, callback, checks)
      const asGateway = await oidc.tokenIntrospection(await configFor(gateway), tokens.access_token)
      expect(asGateway).toMatchObject({ active: true, aud: mcp, client_id: confidential.id })
      expect(await oidc.tokenIntrospection(await configFor(other), tokens.access_token)).toEqual({ active: false })
    })
  })
}
