import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { auth, UnauthorizedError } from "@modelcontextprotocol/sdk/client/auth.js"
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js"
import { MemoryProvider, startExampleMcpServer } from "../support/mcpClient.js"
import { Jar, useProvider } from "../support/openidProvider.js"
import * as TestApp from "../support/TestApp.js"

/**
 * A real MCP client (the official SDK's `auth()` and streamable HTTP transport) against the
 * example MCP server (examples/mcp-server) guarded by Portcullis: the 401 naming the resource's
 * metadata, the protected-resource and authorization-server metadata, registration by RFC 7591,
 * the authorization with PKCE and `resource` (sign-in and consent played through the routes the
 * hosted pages call), the token, the tool answering the caller's email, and a refresh.
 */

for (const backend of TestApp.backends) {
  describe(`an MCP client signing in to the example MCP server through Portcullis (${backend.name})`, () => {
    const provider = useProvider(backend, { env: { SERVICE_OIDC_DYNAMIC_REGISTRATION: "true" } })
    let mcp: Awaited<ReturnType<typeof startExampleMcpServer>> | undefined
    let mcpBase = ""

    // After the provider's own beforeAll, which the server's resource is registered with.
    beforeAll(async () => {
      mcp = await startExampleMcpServer(provider)
      mcpBase = mcp.base
    })
    afterAll(() => mcp?.close())

    /** The browser's part: the authorization URL followed, sign-in and consent done; the code. */
    const userAuthorizes = async (authorizationUrl: URL, email: string) => {
      const jar = new Jar()
      const first = await fetch(authorizationUrl, { redirect: "manual" })
      expect(first.status).toBe(303)
      const request = new URL(first.headers.get("location") ?? "").searchParams.get("request") ?? ""
      const signedIn = await fetch(provider.route("/oauth2/session"), {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ email, password: "correct horse battery staple", request })
      })
      expect(signedIn.status).toBe(200)
      jar.take(signedIn.headers)
      const consent = new URL(((await signedIn.json()) as { continue: string }).continue)
      expect(consent.pathname).toMatch(/\/oauth2\/consent$/)
      const prompt = (await (
        await fetch(consent, { headers: { cookie: jar.header, accept: "application/json" } })
      ).json()) as { client_name: string; self_registered: boolean; scopes: Array<string> }
      expect(prompt).toMatchObject({ client_name: "An MCP client", self_registered: true })
      expect(prompt.scopes).toEqual(expect.arrayContaining(["email", "mcp:tools"]))
      const callback = await provider.allow(request, jar)
      expect(callback.searchParams.get("iss")).toBe(provider.issuer)
      expect(callback.searchParams.get("state")).toBe(authorizationUrl.searchParams.get("state"))
      return callback.searchParams.get("code") ?? ""
    }

    it("registers, is authorized for the resource, calls the tool as the user, and refreshes", async () => {
      const email = await provider.newUser()
      const mcpUrl = new URL(`${mcpBase}/mcp`)
      const client = new MemoryProvider("http://127.0.0.1:53682/callback")

      // Unauthorized: the SDK follows the 401 to the metadata, registers and sends the user away.
      const first = new Client({ name: "test-client", version: "1.0.0" })
      await expect(
        first.connect(new StreamableHTTPClientTransport(mcpUrl, { authProvider: client }))
      ).rejects.toBeInstanceOf(UnauthorizedError)
      expect(client.information?.client_id).toMatch(/^[A-Za-z0-9_-]{22}$/)
      const authorizationUrl = client.authorizationUrl
      if (authorizationUrl === undefined) throw new Error("the SDK sent the user nowhere")
      expect(`${authorizationUrl.origin}${authorizationUrl.pathname}`).toBe(provider.route("/oauth2/authorize"))
      expect(authorizationUrl.searchParams.get("resource")).toBe(mcpUrl.href)
      expect(authorizationUrl.searchParams.get("code_challenge_method")).toBe("S256")

      const code = await userAuthorizes(authorizationUrl, email)
      const transport = new StreamableHTTPClientTransport(mcpUrl, { authProvider: client })
      await transport.finishAuth(code)
      expect(client.saved?.refresh_token).toBeDefined()

      const connected = new Client({ name: "test-client", version: "1.0.0" })
      await connected.connect(transport)
      const answer = await connected.callTool({ name: "whoami", arguments: {} })
      expect(answer.content).toEqual([{ type: "text", text: email }])
      await connected.close()

      // A refresh through the SDK: a new access token, still for the resource, still the user.
      const before = client.saved
      expect(await auth(client, { serverUrl: mcpUrl })).toBe("AUTHORIZED")
      expect(client.saved?.access_token).not.toBe(before?.access_token)
      expect(client.saved?.refresh_token).not.toBe(before?.refresh_token)
      const again = new Client({ name: "test-client", version: "1.0.0" })
      await again.connect(new StreamableHTTPClientTransport(mcpUrl, { authProvider: client }))
      expect((await again.callTool({ name: "whoami", arguments: {} })).content).toEqual([{ type: "text", text: email }])
      await again.close()
    })
  })
}
