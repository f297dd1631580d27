import { createServer, type Server } from "node:http"
import type { AddressInfo } from "node:net"
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import * as oidc from "openid-client"
import * as ClientMetadataDocumentsHttp from "../../infrastructure/oidc/ClientMetadataDocumentsHttp.js"
import { useProvider } from "../support/openidProvider.js"
import * as TestApp from "../support/TestApp.js"

/**
 * Client ID Metadata Documents with OIDC_CLIENT_METADATA_DOCUMENTS (and, to serve them on
 * loopback, OIDC_CLIENT_METADATA_ALLOW_PRIVATE): a client_id that is a URL is fetched, kept for
 * as long as its server allows (5 minutes at least), and signs a user in as a public client;
 * a document that names another client_id, is too big, or cannot be had is an error page.
 */

/** What the document server answers, by path, and how often each was asked for. */
const documents = new Map<string, { readonly body: string; readonly cacheControl?: string }>()
const hits = new Map<string, number>()
let documentServer: Server | undefined
let documentBase = ""

beforeAll(async () => {
  const server = createServer((request, response) => {
    const path = request.url ?? ""
    hits.set(path, (hits.get(path) ?? 0) + 1)
    const found = documents.get(path)
    if (found === undefined) return response.writeHead(404).end()
    response.writeHead(200, {
      "content-type": "application/json",
      ...(found.cacheControl === undefined ? {} : { "cache-control": found.cacheControl })
    })
    response.end(found.body)
  })
  documentServer = server
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  documentBase = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
})
afterAll(() => new Promise<void>((resolve) => documentServer?.close(() => resolve())))

/** Serves a document at `path` naming its own URL (unless told otherwise); answers that URL. */
const serve = (path: string, fields: Record<string, unknown> = {}, cacheControl?: string) => {
  const url = `${documentBase}${path}`
  documents.set(path, {
    body: JSON.stringify({
      client_id: url,
      client_name: "A metadata-document agent",
      redirect_uris: ["http://127.0.0.1:53682/callback"],
      token_endpoint_auth_method: "none",
      ...fields
    }),
    ...(cacheControl === undefined ? {} : { cacheControl })
  })
  return url
}

for (const backend of TestApp.backends.slice(0, 2))
  describe(`client ID metadata documents (${backend.name})`, () => {
    const provider = useProvider(backend, {
      env: { SERVICE_OIDC_CLIENT_METADATA_DOCUMENTS: "true", SERVICE_OIDC_CLIENT_METADATA_ALLOW_PRIVATE: "true" }
    })
    const { newUser, browse, start } = provider

    const configOf = async (clientId: string) => {
      const config = new oidc.Configuration(
        (
          await oidc.discovery(new URL(provider.issuer), "any", undefined, oidc.None(), {
            execute: [oidc.allowInsecureRequests]
          })
        ).serverMetadata(),
        clientId,
        undefined,
        oidc.None()
      )
      oidc.allowInsecureRequests(config)
      return config
    }

    it("advertises the support, and signs a user in with a client named by its document's URL, fetched once", async () => {
      const path = `/agent-${Date.now()}.json`
      const clientId = serve(path, {}, "max-age=600")
      const config = await configOf(clientId)
      expect(config.serverMetadata().client_id_metadata_document_supported).toBe(true)
      for (let round = 0; round < 2; round++) {
        const { url, checks } = await start(config, "openid email", { redirect_uri: "http://127.0.0.1:53682/callback" })
        const { callback } = await browse(url, await newUser())
        const tokens = await oidc.authorizationCodeGrant(config, callback, checks)
        expect(tokens.claims()?.aud).toBe(clientId)
      }
      // Kept 600 s as its server allowed: the second authorization read the stored copy.
      expect(hits.get(path)).toBe(1)
    })

    it("shows an error page, never redirecting, for a document naming another client_id, too big, or missing", async () => {
      const cases = [
        serve(`/other-${Date.now()}.json`, { client_id: "https://elsewhere.example.com/client.json" }),
        serve(`/big-${Date.now()}.json`, { padding: "x".repeat(6_000) }),
        serve(`/secret-${Date.now()}.json`, { token_endpoint_auth_method: "client_secret_basic" }),
        `${documentBase}/missing.json`
      ]
      for (const clientId of cases) {
        const config = await configOf(clientId)
        const { url } = await start(config, "openid", { redirect_uri: "http://127.0.0.1:53682/callback" })
        const reply = await fetch(url, { redirect: "manual" })
        expect(reply.status, clientId).toBe(400)
        expect(reply.headers.get("location")).toBeNull()
        expect(await reply.text()).toContain("metadata document")
      }
    })
  })

describe("the metadata document fetcher without OIDC_CLIENT_METADATA_ALLOW_PRIVATE", () => {
  it("refuses a private address before connecting", async () => {
    const fetcher = ClientMetadataDocumentsHttp.make(false)
    const refused = await Effect.runPromise(Effect.flip(fetcher.fetch(`${documentBase}/anything.json`)))
    expect(refused.reason).toMatch(/is private .*OIDC_CLIENT_METADATA_ALLOW_PRIVATE=true allows it/)
    const named = await Effect.runPromise(Effect.flip(fetcher.fetch("http://localhost:9/anything.json")))
    expect(named.reason).toMatch(/is private/)
  })
})

for (const backend of TestApp.backends.slice(0, 1))
  describe(`metadata documents' fetches count in oidc_register (${backend.name})`, () => {
    const provider = useProvider(backend, {
      env: {
        SERVICE_OIDC_CLIENT_METADATA_DOCUMENTS: "true",
        SERVICE_OIDC_CLIENT_METADATA_ALLOW_PRIVATE: "true",
        SERVICE_AUTH_RATE_LIMIT_ENABLED: "true",
        SERVICE_AUTH_RATE_LIMITS: JSON.stringify({ oidc_register: "2/hour" })
      }
    })

    it("fetches two documents for one address, then refuses a third; a kept copy costs nothing", async () => {
      const metadata = (
        await oidc.discovery(new URL(provider.issuer), "any", undefined, oidc.None(), {
          execute: [oidc.allowInsecureRequests]
        })
      ).serverMetadata()
      const authorize = async (clientId: string) => {
        const config = new oidc.Configuration(metadata, clientId, undefined, oidc.None())
        oidc.allowInsecureRequests(config)
        const { url } = await provider.start(config, "openid", { redirect_uri: "http://127.0.0.1:53682/callback" })
        return fetch(url, { redirect: "manual" })
      }
      const stamp = Date.now()
      const first = serve(`/limited-a-${stamp}.json`, {}, "max-age=600")
      expect((await authorize(first)).status).toBe(303)
      expect((await authorize(serve(`/limited-b-${stamp}.json`))).status).toBe(303)
      // Kept: authorizing the first again fetches nothing, and counts nothing.
      expect((await authorize(first)).status).toBe(303)
      const third = await authorize(serve(`/limited-c-${stamp}.json`))
      expect(third.status).toBe(400)
      expect(await third.text()).toContain("too many documents fetched")
      expect(hits.get(`/limited-c-${stamp}.json`)).toBeUndefined()
    })
  })
