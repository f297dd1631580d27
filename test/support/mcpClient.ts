import { createServer, type Server } from "node:http"
import type { AddressInfo } from "node:net"
import type { OAuthClientProvider } from "@modelcontextprotocol/sdk/client/auth.js"
import type {
  OAuthClientInformationMixed,
  OAuthClientMetadata,
  OAuthTokens
} from "@modelcontextprotocol/sdk/shared/auth.js"
import { DateTime, Effect } from "effect"
import { OidcResources } from "../../application/ports/OidcResources.js"
import { createMcpServer } from "../../examples/mcp-server/server.js"
import type { useProvider } from "./openidProvider.js"

/** What an MCP client keeps: its registration, its tokens, its verifier, where it sent the user. */
export class MemoryProvider implements OAuthClientProvider {
  information: OAuthClientInformationMixed | undefined
  saved: OAuthTokens | undefined
  verifier = ""
  authorizationUrl: URL | undefined
  constructor(readonly redirectUrl: string) {}
  get clientMetadata(): OAuthClientMetadata {
    return {
      client_name: "An MCP client",
      redirect_uris: [this.redirectUrl],
      grant_types: ["authorization_code", "refresh_token"],
      response_types: ["code"],
      token_endpoint_auth_method: "none"
    }
  }
  clientInformation() {
    return this.information
  }
  saveClientInformation(information: OAuthClientInformationMixed) {
    this.information = information
  }
  tokens() {
    return this.saved
  }
  saveTokens(tokens: OAuthTokens) {
    this.saved = tokens
  }
  redirectToAuthorization(url: URL) {
    this.authorizationUrl = url
  }
  saveCodeVerifier(verifier: string) {
    this.verifier = verifier
  }
  codeVerifier() {
    return this.verifier
  }
}

/** Listens on a free port of 127.0.0.1; its base URL. */
export const listening = async (server: Server) => {
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`
}

/**
 * The example MCP server (examples/mcp-server) on a port of its own, its resource (its URL,
 * with the scope `mcp:tools`) registered with `provider`: its base URL and how to stop it.
 */
export const startExampleMcpServer = async (provider: Pick<ReturnType<typeof useProvider>, "issuer" | "run">) => {
  // The port comes first (the resource is the server's URL), then the server that answers on it.
  let guarded: Server | undefined
  const outer = createServer((request, response) => guarded?.emit("request", request, response))
  const base = await listening(outer)
  guarded = createMcpServer({ issuer: provider.issuer, base })
  await provider.run(
    Effect.flatMap(OidcResources, (resources) =>
      resources.add({
        uri: `${base}/mcp`,
        scopes: ["mcp:tools"],
        introspecting_client: null,
        created_at: DateTime.unsafeMake(0)
      })
    )
  )
  return { base, close: () => new Promise<void>((resolve) => outer.close(() => resolve())) }
}
