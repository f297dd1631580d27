import { randomBytes } from "node:crypto"
import { createServer, type IncomingMessage, type ServerResponse } from "node:http"
import { pathToFileURL } from "node:url"
import * as oidc from "openid-client"

/**
 * A relying party of Portcullis's OpenID Provider in a few dozen lines on openid-client: "Sign
 * in" sends the browser to Portcullis with PKCE, the callback redeems the code, the page shows
 * the user's userinfo, and "Sign out" goes through end-session. Sessions live in memory.
 */
export interface AppOptions {
  /** The provider's issuer (OIDC_ISSUER): its discovery document is read from there. */
  readonly issuer: string
  readonly clientId: string
  readonly clientSecret: string
  /** Where this app is reached, e.g. http://localhost:3000: its callback is `<base>/callback`. */
  readonly base: string
  /** Allow http issuers (local development only). */
  readonly insecure?: boolean
}

interface Session {
  verifier?: string
  state?: string
  nonce?: string
  tokens?: oidc.TokenEndpointResponse & oidc.TokenEndpointResponseHelpers
}

const htmlText = (text: string) => text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`)
const page = (response: ServerResponse, body: string) => {
  response.setHeader("content-type", "text/html; charset=utf-8")
  response.end(
    `<!doctype html><html lang="en"><meta charset="utf-8"><title>Example app</title><main>${body}</main></html>`
  )
}

export const createApp = async (options: AppOptions) => {
  const config = await oidc.discovery(
    new URL(options.issuer),
    options.clientId,
    options.clientSecret,
    undefined,
    options.insecure === true ? { execute: [oidc.allowInsecureRequests] } : undefined
  )
  const sessions = new Map<string, Session>()
  const sessionOf = (request: IncomingMessage, response: ServerResponse) => {
    const id = /(?:^|; )app_session=([\w-]+)/.exec(request.headers.cookie ?? "")?.[1]
    const found = id === undefined ? undefined : sessions.get(id)
    if (found !== undefined) return found
    const fresh = randomBytes(16).toString("base64url")
    response.setHeader("set-cookie", `app_session=${fresh}; HttpOnly; SameSite=Lax; Path=/`)
    const session: Session = {}
    sessions.set(fresh, session)
    return session
  }

  const handle = async (request: IncomingMessage, response: ServerResponse) => {
    const url = new URL(request.url ?? "/", options.base)
    const session = sessionOf(request, response)
    if (url.pathname === "/login") {
      session.verifier = oidc.randomPKCECodeVerifier()
      session.state = oidc.randomState()
      session.nonce = oidc.randomNonce()
      const target = oidc.buildAuthorizationUrl(config, {
        redirect_uri: `${options.base}/callback`,
        scope: "openid email",
        code_challenge: await oidc.calculatePKCECodeChallenge(session.verifier),
        code_challenge_method: "S256",
        state: session.state,
        nonce: session.nonce
      })
      response.writeHead(302, { location: target.href }).end()
    } else if (url.pathname === "/callback") {
      session.tokens = await oidc.authorizationCodeGrant(config, url, {
        pkceCodeVerifier: session.verifier ?? "",
        expectedState: session.state ?? "",
        expectedNonce: session.nonce ?? ""
      })
      response.writeHead(302, { location: "/" }).end()
    } else if (url.pathname === "/logout" && session.tokens !== undefined) {
      const target = oidc.buildEndSessionUrl(config, {
        id_token_hint: session.tokens.id_token ?? "",
        post_logout_redirect_uri: `${options.base}/`
      })
      delete session.tokens
      response.writeHead(302, { location: target.href }).end()
    } else if (session.tokens !== undefined) {
      const claims = session.tokens.claims()
      const info = await oidc.fetchUserInfo(config, session.tokens.access_token, claims?.sub ?? "")
      page(
        response,
        `<p>Signed in as <strong id="email">${htmlText(String(info.email))}</strong>.</p><p><a href="/logout">Sign out</a></p>`
      )
    } else {
      page(response, `<p id="signed-out">You are not signed in.</p><p><a href="/login">Sign in</a></p>`)
    }
  }

  return createServer((request, response) => {
    handle(request, response).catch((error: unknown) => {
      response.statusCode = 500
      page(response, `<p>Sign-in failed: ${htmlText(String(error))}</p>`)
    })
  })
}

// `npx tsx examples/oidc-app/app.ts`: settings from the environment (README.md beside this file).
if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const port = Number(process.env.PORT ?? 3000)
  const server = await createApp({
    issuer: process.env.ISSUER ?? "http://localhost:8000",
    clientId: process.env.CLIENT_ID ?? "",
    clientSecret: process.env.CLIENT_SECRET ?? "",
    base: `http://localhost:${port}`,
    insecure: (process.env.ISSUER ?? "http://").startsWith("http://")
  })
  server.listen(port, () => console.log(`The example app listens on http://localhost:${port}`))
}
