import { createServer } from "node:http"
import { pathToFileURL } from "node:url"
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js"
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js"
import { nodeGuard, resourceServer } from "../../packages/client/src/resource-server.js"

/**
 * An MCP server guarded by Portcullis's OpenID Provider, on @modelcontextprotocol/sdk's streamable
 * HTTP transport (stateless: a server and a transport per request). The resource-server helper
 * serves its protected-resource metadata and refuses requests without a token for it; its one
 * tool, `whoami`, answers the caller's email, read from the provider's userinfo with the
 * caller's own token (so the token needs `openid` and `email` beside `mcp:tools`).
 */
export interface McpServerOptions {
  /** The provider's issuer (OIDC_ISSUER). */
  readonly issuer: string
  /** Where this server is reached, e.g. http://localhost:3001: the MCP endpoint is `<base>/mcp`. */
  readonly base: string
}

/** What the server's metadata offers clients to ask for. */
export const mcpScopes = ["openid", "email", "offline_access", "mcp:tools"] as const

export const createMcpServer = (options: McpServerOptions) => {
  const resource = `${options.base}/mcp`
  const guard = nodeGuard(
    resourceServer({ issuer: options.issuer, resource, scopesSupported: mcpScopes, resourceName: "Who am I" })
  )
  let userinfoEndpoint: string | undefined
  const userinfo = async (token: string) => {
    userinfoEndpoint ??= String(
      (
        (await (await fetch(`${options.issuer}/.well-known/openid-configuration`)).json()) as {
          userinfo_endpoint: string
        }
      ).userinfo_endpoint
    )
    const reply = await fetch(userinfoEndpoint, { headers: { authorization: `Bearer ${token}` } })
    return reply.ok ? ((await reply.json()) as { email?: string }) : {}
  }

  return createServer(async (request, response) => {
    if (guard.metadata(request, response)) return
    if ((request.url ?? "").split("?")[0] !== "/mcp") {
      response.writeHead(404).end()
      return
    }
    const claims = await guard.guard(request, response, ["mcp:tools"])
    if (claims === undefined) return
    const token = String(request.headers.authorization).replace(/^Bearer +/i, "")

    const server = new McpServer({ name: "portcullis-whoami", version: "1.0.0" })
    server.registerTool(
      "whoami",
      { description: "Your email address on the service that signed you in." },
      async (extra) => {
        const { email } = await userinfo(extra.authInfo?.token ?? "")
        return { content: [{ type: "text", text: email ?? "(no email: grant the email scope)" }] }
      }
    )
    const transport = new StreamableHTTPServerTransport({}) // no session id generator: stateless
    response.on("close", () => {
      void transport.close()
      void server.close()
    })
    await server.connect(transport)
    await transport.handleRequest(
      Object.assign(request, {
        auth: { token, clientId: claims.client_id, scopes: [...claims.scopes], resource: new URL(resource) }
      }),
      response
    )
  })
}

// `npx tsx examples/mcp-server/server.ts`: settings from the environment (README.md beside this file).
if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const port = Number(process.env.PORT ?? 3001)
  const base = process.env.BASE ?? `http://localhost:${port}`
  createMcpServer({ issuer: process.env.ISSUER ?? "http://localhost:8000", base }).listen(port, () =>
    console.log(`The MCP server listens on ${base}/mcp`)
  )
}
