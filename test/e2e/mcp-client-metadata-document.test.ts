import { execFileSync } from "node:child_process"
import { generateKeyPairSync } from "node:crypto"
import { mkdtempSync, readFileSync } from "node:fs"
import { createServer, type Server } from "node:http"
import { createServer as createHttpsServer } from "node:https"
import type { AddressInfo } from "node:net"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { auth, UnauthorizedError } from "@modelcontextprotocol/sdk/client/auth.js"
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { createMcpServer } from "../../examples/mcp-server/server.js"
import { password } from "../support/flows.js"
import { MemoryProvider } from "../support/mcpClient.js"
import { allowParked, Jar, signInParked } from "../support/openidProvider.js"
import { noPostgres, scratchDatabase } from "../support/postgres.js"
import { cleanEnv, cli, freePort, killAll, root, startServer, temporaryDatabase } from "../support/processes.js"

/**
 * The official MCP SDK's client registering by a Client ID Metadata Document instead of RFC 7591:
 * its `clientMetadataUrl` (https, as the SDK requires) is served on loopback with a certificate
 * the service trusts (NODE_EXTRA_CA_CERTS), and Portcullis runs as its own process with
 * OIDC_CLIENT_METADATA_DOCUMENTS and OIDC_CLIENT_METADATA_ALLOW_PRIVATE: it fetches the document,
 * and the client signs the user in and calls the example MCP server's tool.
 */

const servers: Array<{ close: (done: () => void) => void }> = []
afterAll(async () => {
  await killAll()
  await Promise.all(servers.map((server) => new Promise<void>((resolve) => server.close(() => resolve()))))
})

const listening = async (server: Server) => {
  servers.push(server)
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  return (server.address() as AddressInfo).port
}

/** A self-signed certificate for 127.0.0.1, by openssl: its key and certificate files. */
const certificate = () => {
  const folder = mkdtempSync(join(tmpdir(), "portcullis-cimd-"))
  const key = join(folder, "key.pem")
  const cert = join(folder, "cert.pem")
  execFileSync(
    "openssl",
    [
      "req",
      "-x509",
      "-newkey",
      "rsa:2048",
      "-nodes",
      "-keyout",
      key,
      "-out",
      cert,
      "-days",
      "1",
      "-subj",
      "/CN=127.0.0.1",
      "-addext",
      "subjectAltName=IP:127.0.0.1"
    ],
    { stdio: "ignore" }
  )
  return { key, cert }
}

/** An MCP client that names itself by its metadata document's URL instead of registering. */
class DocumentClient extends MemoryProvider {
  constructor(readonly clientMetadataUrl: string) {
    super("http://127.0.0.1:53682/callback")
  }
}

/** The databases the service runs on here: a SQLite file, and a PostgreSQL database of its own when there is one. */
const stores = [
  {
    name: "SQLite",
    skip: false,
    url: temporaryDatabase,
    setUp: async () => undefined,
    tearDown: async () => undefined
  },
  (() => {
    const scratch = scratchDatabase("cimd")
    return {
      name: "PostgreSQL",
      skip: noPostgres,
      url: () => scratch.url,
      setUp: scratch.create,
      tearDown: scratch.drop
    }
  })()
]

for (const store of stores)
  describe.skipIf(store.skip)(
    `an MCP client registered by its metadata document (${store.name}, its own process)`,
    () => {
      beforeAll(store.setUp)
      afterAll(store.tearDown)
      it("is fetched by the service, signs the user in, calls the tool, and refreshes", {
        timeout: 120_000
      }, async () => {
        const { key, cert } = certificate()
        let documentUrl = ""
        let fetched = 0
        const documentServer = createHttpsServer(
          { key: readFileSync(key), cert: readFileSync(cert) },
          (_request, response) => {
            fetched++
            response.writeHead(200, { "content-type": "application/json", "cache-control": "max-age=600" })
            response.end(
              JSON.stringify({
                client_id: documentUrl,
                client_name: "A document client",
                redirect_uris: ["http://127.0.0.1:53682/callback"],
                grant_types: ["authorization_code", "refresh_token"],
                token_endpoint_auth_method: "none"
              })
            )
          }
        )
        documentUrl = `https://127.0.0.1:${await listening(documentServer as unknown as Server)}/client.json`

        let guarded: Server | undefined
        const mcp = createServer((request, response) => guarded?.emit("request", request, response))
        const mcpBase = `http://127.0.0.1:${await listening(mcp)}`

        const port = await freePort()
        const base = `http://127.0.0.1:${port}`
        const vars = {
          SERVICE_SECRET_KEY: "cimd-e2e-secret-key-of-32-bytes-or-more!",
          SERVICE_DATABASE_URL: store.url(),
          SERVICE_PUBLIC_URL: base,
          SERVICE_LOG_LEVEL: "warning",
          SERVICE_OIDC_PROVIDER_ENABLED: "true",
          SERVICE_OIDC_PRIVATE_KEY: generateKeyPairSync("rsa", { modulusLength: 2048 })
            .privateKey.export({ format: "pem", type: "pkcs8" })
            .toString(),
          SERVICE_OIDC_CLIENT_METADATA_DOCUMENTS: "true",
          SERVICE_OIDC_CLIENT_METADATA_ALLOW_PRIVATE: "true",
          NODE_EXTRA_CA_CERTS: cert
        }
        execFileSync(process.execPath, [cli, "resource", "add", "--uri", `${mcpBase}/mcp`, "--scope", "mcp:tools"], {
          cwd: root,
          env: cleanEnv(vars)
        })
        await startServer(vars, { port })
        guarded = createMcpServer({ issuer: base, base: mcpBase })
        const email = `cimd-${Date.now()}@example.com`
        const registered = await fetch(`${base}/api/v1/auth/register`, {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: JSON.stringify({ email, password })
        })
        expect(registered.status).toBeLessThan(300)

        const client = new DocumentClient(documentUrl)
        const mcpUrl = new URL(`${mcpBase}/mcp`)
        const first = new Client({ name: "test-client", version: "1.0.0" })
        await expect(
          first.connect(new StreamableHTTPClientTransport(mcpUrl, { authProvider: client }))
        ).rejects.toBeInstanceOf(UnauthorizedError)
        const authorizationUrl = client.authorizationUrl
        if (authorizationUrl === undefined) throw new Error("the SDK sent the user nowhere")
        expect(authorizationUrl.searchParams.get("client_id")).toBe(documentUrl)

        // The user: sign-in and consent through the routes the hosted pages call.
        const jar = new Jar()
        const parked = await fetch(authorizationUrl, { redirect: "manual" })
        expect(parked.status, await parked.clone().text()).toBe(303)
        const request = new URL(parked.headers.get("location") ?? "").searchParams.get("request") ?? ""
        const route = (path: string) => `${base}/api/v1/auth${path}`
        await signInParked(route, { request, email, jar })
        const code = (await allowParked(route, { request, jar })).searchParams.get("code") ?? ""

        const transport = new StreamableHTTPClientTransport(mcpUrl, { authProvider: client })
        await transport.finishAuth(code)
        const connected = new Client({ name: "test-client", version: "1.0.0" })
        await connected.connect(transport)
        expect((await connected.callTool({ name: "whoami", arguments: {} })).content).toEqual([
          { type: "text", text: email }
        ])
        await connected.close()
        // A refresh through the SDK, for the same client and resource.
        const before = client.saved
        expect(await auth(client, { serverUrl: mcpUrl })).toBe("AUTHORIZED")
        expect(client.saved?.refresh_token).toBeDefined()
        expect(client.saved?.access_token).not.toBe(before?.access_token)
        expect(fetched).toBe(1)
      })
    }
  )
