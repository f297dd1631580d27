import { UnauthorizedError } from "@modelcontextprotocol/sdk/client/auth.js"
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js"
import type { Browser } from "playwright-core"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { browserSuite, launchChromium } from "../support/browser.js"
import { password } from "../support/flows.js"
import { MemoryProvider, startExampleMcpServer } from "../support/mcpClient.js"
import { useProvider } from "../support/openidProvider.js"

/**
 * The MCP dance with the user's part in Chromium on the hosted pages: the official SDK's client
 * registers (RFC 7591) and sends the user to Portcullis; the user signs in on /oauth2/sign-in and
 * allows the client on /oauth2/consent, both by their labels; the browser lands on the client's
 * loopback redirect (answered by the test), whose code the SDK redeems; the tool answers the
 * user's email.
 */

const suite = browserSuite("the MCP dance through the hosted pages in a real browser (Chromium)")

describe.skipIf(suite.skip)(suite.title, () => {
  const provider = useProvider(
    { name: "sqlite", databaseUrl: "sqlite::memory:" },
    { host: "localhost", env: { SERVICE_OIDC_DYNAMIC_REGISTRATION: "true" } }
  )
  let browser: Browser | undefined
  let mcp: Awaited<ReturnType<typeof startExampleMcpServer>> | undefined
  let mcpBase = ""

  beforeAll(async () => {
    suite.requirePresent()
    browser = await launchChromium()
    mcp = await startExampleMcpServer(provider)
    mcpBase = mcp.base
  }, 60_000)
  afterAll(async () => {
    await browser?.close()
    await mcp?.close()
  })

  it("registers, sends the user through sign-in and consent, and calls the tool as them", async () => {
    const email = await provider.newUser()
    const mcpUrl = new URL(`${mcpBase}/mcp`)
    const client = new MemoryProvider("http://127.0.0.1:53682/callback")
    const first = new Client({ name: "browser-test-client", version: "1.0.0" })
    await expect(
      first.connect(new StreamableHTTPClientTransport(mcpUrl, { authProvider: client }))
    ).rejects.toBeInstanceOf(UnauthorizedError)
    const authorizationUrl = client.authorizationUrl
    if (authorizationUrl === undefined) throw new Error("the SDK sent the user nowhere")

    const context = await (browser as Browser).newContext()
    const page = await context.newPage()
    let landed: string | undefined
    await page.route("http://127.0.0.1:53682/**", (route) => {
      landed = route.request().url()
      return route.fulfill({ status: 200, contentType: "text/plain", body: "back in the client" })
    })
    await page.goto(authorizationUrl.href)
    await expect.poll(() => page.url()).toContain("/oauth2/sign-in")
    await page.getByLabel("Email address", { exact: true }).fill(email)
    await page.getByLabel("Password").fill(password)
    await page.getByRole("button", { name: "Sign in", exact: true }).click()
    await expect.poll(() => page.url(), { timeout: 15_000 }).toContain("/oauth2/consent")
    await expect.poll(() => page.locator("#client").textContent()).toBe("An MCP client")
    // A client that registered itself: the page says nobody checked it, and where it returns.
    expect(await page.locator("#unverified").isVisible()).toBe(true)
    expect(await page.locator("#redirect-host").textContent()).toBe("127.0.0.1:53682")
    await page.getByRole("button", { name: "Allow" }).click()
    await expect.poll(() => landed, { timeout: 15_000 }).toBeDefined()
    await context.close()

    const code = new URL(landed ?? "").searchParams.get("code") ?? ""
    const transport = new StreamableHTTPClientTransport(mcpUrl, { authProvider: client })
    await transport.finishAuth(code)
    const connected = new Client({ name: "browser-test-client", version: "1.0.0" })
    await connected.connect(transport)
    expect((await connected.callTool({ name: "whoami", arguments: {} })).content).toEqual([
      { type: "text", text: email }
    ])
    await connected.close()
  })
})
