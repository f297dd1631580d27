import { createServer, type Server } from "node:http"
import type { AddressInfo } from "node:net"
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { DateTime, Effect } from "effect"
import * as oidc from "openid-client"
import { OidcResources } from "../../application/ports/OidcResources.js"
import {
  nodeGuard,
  protectedResourceMetadataPath,
  resourceServer,
  verifyEffect
} from "../../packages/client/src/resource-server.js"
import { signIn } from "../support/flows.js"
import { confidential, useProvider } from "../support/openidProvider.js"
import * as TestApp from "../support/TestApp.js"

/**
 * The resource-server helper (`@portcullis/client/resource-server`) guarding two node:http APIs
 * registered with the provider: its RFC 9728 metadata, the RFC 6750 §3 challenges naming it, a
 * token of one resource refused by the other, and a missing scope answered 403 until a new
 * authorization grants it.
 */

/** A node:http API guarded for `scopes`, at a free port; its base URL and the resource it is. */
const guardedApi = async (issuer: () => string, path: string, scopes: ReadonlyArray<string>) => {
  let guard: ReturnType<typeof nodeGuard> | undefined
  const server: Server = createServer((request, response) => {
    if (guard === undefined) return response.writeHead(503).end()
    if (guard.metadata(request, response)) return
    void guard.guard(request, response, scopes).then((claims) => {
      if (claims === undefined) return
      response.writeHead(200, { "content-type": "application/json" })
      response.end(JSON.stringify({ sub: claims.sub, scopes: claims.scopes }))
    })
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  const resource = `${base}${path}`
  return {
    base,
    resource,
    start: () => {
      guard = nodeGuard(resourceServer({ issuer: issuer(), resource, scopesSupported: scopes, resourceName: path }))
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve()))
  }
}

for (const backend of TestApp.backends.slice(0, 1))
  describe(`the resource-server helper guarding two APIs (${backend.name})`, () => {
    const provider = useProvider(backend)
    const { configFor, newUser, browse, start, run } = provider
    let mcp: Awaited<ReturnType<typeof guardedApi>>
    let reports: Awaited<ReturnType<typeof guardedApi>>

    beforeAll(async () => {
      mcp = await guardedApi(() => provider.issuer, "/mcp", ["mcp:tools"])
      reports = await guardedApi(() => provider.issuer, "/reports", [])
    })
    afterAll(async () => {
      await mcp?.close()
      await reports?.close()
    })

    const registered = async () => {
      mcp.start()
      reports.start()
      await run(
        Effect.gen(function* () {
          const resources = yield* OidcResources
          const at = DateTime.unsafeMake(0)
          for (const [uri, scopes] of [
            [mcp.resource, ["mcp:tools"]],
            [reports.resource, []]
          ] as const) {
            yield* Effect.ignore(resources.add({ uri, scopes, introspecting_client: null, created_at: at }))
          }
        })
      )
    }

    /** An access token of the confidential client for `resource` with `scope`. */
    const tokenFor = async (resource: string, scope: string) => {
      await registered()
      const config = await configFor(confidential)
      const { url, checks } = await start(config, scope)
      url.searchParams.append("resource", resource)
      const { callback } = await browse(url, await newUser())
      return (await oidc.authorizationCodeGrant(config, callback, checks)).access_token
    }

    const call = (base: string, path: string, token?: string) =>
      fetch(`${base}${path}`, token === undefined ? {} : { headers: { authorization: `Bearer ${token}` } })

    it("publishes its protected-resource metadata at the path RFC 9728 appends the resource's to", async () => {
      await registered()
      expect(protectedResourceMetadataPath(mcp.resource)).toBe("/.well-known/oauth-protected-resource/mcp")
      const reply = await call(mcp.base, "/.well-known/oauth-protected-resource/mcp")
      expect(reply.status).toBe(200)
      expect(await reply.json()).toEqual({
        resource: mcp.resource,
        authorization_servers: [provider.issuer],
        bearer_methods_supported: ["header"],
        scopes_supported: ["mcp:tools"],
        resource_name: "/mcp"
      })
    })

    it("answers 401 with resource_metadata without a token, and invalid_token for one that is not the provider's", async () => {
      await registered()
      const none = await call(mcp.base, "/mcp")
      expect(none.status).toBe(401)
      expect(none.headers.get("www-authenticate")).toBe(
        `Bearer resource_metadata="${mcp.base}/.well-known/oauth-protected-resource/mcp"`
      )
      const own = await run(signIn(await newUser()))
      const portcullisToken = await call(mcp.base, "/mcp", own.access)
      expect(portcullisToken.status).toBe(401)
      expect(portcullisToken.headers.get("www-authenticate")).toMatch(/^Bearer error="invalid_token"/)
      const garbage = await call(mcp.base, "/mcp", "not.a.token")
      expect(garbage.status).toBe(401)
    })

    it("takes a token for its own resource, and refuses one for the other resource", async () => {
      const forReports = await tokenFor(reports.resource, "openid")
      expect((await call(reports.base, "/reports", forReports)).status).toBe(200)
      const elsewhere = await call(mcp.base, "/mcp", forReports)
      expect(elsewhere.status).toBe(401)
      expect(((await elsewhere.json()) as { error_description: string }).error_description).toBe(
        "the access token is for another resource"
      )
      // A token without a resource names the client in aud: no resource takes it.
      const config = await configFor(confidential)
      const { url, checks } = await start(config, "openid")
      const { callback } = await browse(url, await newUser())
      const plain = (await oidc.authorizationCodeGrant(config, callback, checks)).access_token
      expect((await call(reports.base, "/reports", plain)).status).toBe(401)
    })

    it("verifies from Effect: the claims, or a ResourceChallenge carrying the answer", async () => {
      const forReports = await tokenFor(reports.resource, "openid")
      const guard = resourceServer({ issuer: provider.issuer, resource: reports.resource })
      const claims = await Effect.runPromise(verifyEffect(guard, `Bearer ${forReports}`))
      expect(claims.client_id).toBe(confidential.id)
      const challenge = await Effect.runPromise(Effect.flip(verifyEffect(guard, `Bearer ${forReports}`, ["admin"])))
      expect(challenge).toMatchObject({ _tag: "ResourceChallenge", status: 403, body: { error: "insufficient_scope" } })
      const missing = await Effect.runPromise(Effect.flip(verifyEffect(guard, undefined)))
      expect(missing.status).toBe(401)
      expect(missing.headers["www-authenticate"]).toContain("resource_metadata=")
    })

    it("answers 403 insufficient_scope for a missing scope, and a new authorization for it works", async () => {
      const without = await tokenFor(mcp.resource, "openid")
      const refused = await call(mcp.base, "/mcp", without)
      expect(refused.status).toBe(403)
      expect(refused.headers.get("www-authenticate")).toBe(
        `Bearer error="insufficient_scope", error_description="the access token lacks mcp:tools", scope="mcp:tools", resource_metadata="${mcp.base}/.well-known/oauth-protected-resource/mcp"`
      )
      const granted = await tokenFor(mcp.resource, "openid mcp:tools")
      const answered = await call(mcp.base, "/mcp", granted)
      expect(answered.status).toBe(200)
      expect(((await answered.json()) as { scopes: Array<string> }).scopes).toContain("mcp:tools")
    })
  })
