import { generateKeyPairSync, randomBytes } from "node:crypto"
import { createServer, type IncomingMessage, type ServerResponse } from "node:http"
import type { AddressInfo } from "node:net"
import { Effect } from "effect"
import Provider, { type ClientMetadata, type Configuration, type Interaction } from "oidc-provider"
import { parseSetCookie } from "./cookies.js"

/**
 * A real OpenID provider, oidc-provider v9, on 127.0.0.1 for end-to-end tests: registered
 * clients, fixed accounts, PKCE required, and login and consent interactions of its own (the
 * package's development interactions are off) served as small HTML forms, so that a test signs
 * in through it over HTTP as a browser would.
 */

/** An account of the provider: what its login form takes, and the claims it vouches for. */
export interface ProviderAccount {
  readonly login: string
  readonly password: string
  readonly claims: {
    readonly sub: string
    readonly email: string
    readonly email_verified: boolean
    readonly name: string
  }
}

export interface OidcProviderOptions {
  readonly clients: ReadonlyArray<ClientMetadata>
  readonly accounts: ReadonlyArray<ProviderAccount>
  /** The port on 127.0.0.1: a free one unless given (scripts/dev-provider.ts keeps one fixed). */
  readonly port?: number
  /** More of oidc-provider's configuration (the provider bench's refresh rotation). */
  readonly configuration?: Configuration
}

/** What the provider's discovery document says about it. */
export interface Discovery {
  readonly issuer: string
  readonly authorization_endpoint: string
  readonly token_endpoint: string
  readonly userinfo_endpoint: string
  readonly code_challenge_methods_supported: ReadonlyArray<string>
}

export interface RunningOidcProvider {
  readonly issuer: string
  readonly discovery: Discovery
  /** Errors the provider reported (its error events), for a test to show when a flow fails. */
  readonly errors: ReadonlyArray<string>
}

const htmlEscape = (text: string) => text.replace(/[&<>"']/g, (character) => `&#${character.charCodeAt(0)};`)

const page = (response: ServerResponse, status: number, body: string) => {
  response.writeHead(status, { "content-type": "text/html; charset=utf-8", "cache-control": "no-store" })
  response.end(`<!doctype html><html><body>${body}</body></html>`)
}

const readForm = (request: IncomingMessage) =>
  new Promise<URLSearchParams>((resolve, reject) => {
    const chunks: Array<Buffer> = []
    request.on("data", (chunk: Buffer) => chunks.push(chunk))
    request.on("end", () => resolve(new URLSearchParams(Buffer.concat(chunks).toString("utf8"))))
    request.on("error", reject)
  })

/** The interaction's page: a login form, or the consent form naming what the client asks for. */
const interactionPage = (interaction: Interaction, problem?: string) => {
  const action = `/interaction/${encodeURIComponent(interaction.uid)}`
  const error = problem === undefined ? "" : `<p role="alert">${htmlEscape(problem)}</p>`
  switch (interaction.prompt.name) {
    case "login":
      return `<h1>Sign in</h1>${error}<form method="post" action="${action}/login" data-prompt="login"><label for="login">Email</label><input id="login" name="login" autocomplete="username"><label for="password">Password</label><input id="password" name="password" type="password" autocomplete="current-password"><button>Sign in</button></form>`
    case "consent":
      return `<h1>Authorize ${htmlEscape(String(interaction.params.client_id))}</h1><p>Scopes: ${htmlEscape(String(interaction.params.scope))}</p><form method="post" action="${action}/confirm" data-prompt="consent"><button>Allow</button></form>`
    default:
      return `<p>Unsupported prompt ${htmlEscape(interaction.prompt.name)}</p>`
  }
}

export const start = async ({
  clients,
  accounts,
  port = 0,
  configuration = {}
}: OidcProviderOptions): Promise<RunningOidcProvider & { close(): void }> => {
  const errors: Array<string> = []
  let handle: (request: IncomingMessage, response: ServerResponse) => void = (_request, response) => {
    response.statusCode = 503
    response.end()
  }
  const server = createServer((request, response) => handle(request, response))
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject)
    server.listen(port, "127.0.0.1", resolve)
  })
  const issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`

  const signingKey = generateKeyPairSync("rsa", { modulusLength: 2048 }).privateKey.export({ format: "jwk" })
  const provider = new Provider(issuer, {
    clients,
    findAccount: (_ctx, sub) => {
      const account = accounts.find((candidate) => candidate.claims.sub === sub)
      return account === undefined ? undefined : { accountId: sub, claims: () => ({ ...account.claims }) }
    },
    claims: { openid: ["sub"], email: ["email", "email_verified"], profile: ["name"] },
    interactions: { url: (_ctx, interaction) => `/interaction/${interaction.uid}` },
    features: { devInteractions: { enabled: false } },
    // Every client must prove the code with PKCE, S256 being the only method oidc-provider takes.
    pkce: { required: () => true },
    cookies: { keys: [randomBytes(32).toString("base64url")] },
    // Lifetimes of its own, in seconds, rather than the defaults it asks deployments to replace.
    ttl: { AuthorizationCode: 60, AccessToken: 600, IdToken: 600, Interaction: 600, Session: 3600, Grant: 3600 },
    jwks: { keys: [{ ...signingKey, kid: "e2e", use: "sig", alg: "RS256" }] },
    ...configuration
  })
  for (const event of ["server_error", "authorization.error", "grant.error", "userinfo.error"]) {
    provider.on(event, (_ctx, error) => errors.push(`${event}: ${String(error)}`))
  }

  /** The login and consent interactions, as the provider's documentation has deployments write them. */
  const interaction = async (request: IncomingMessage, response: ServerResponse, uid: string, step?: string) => {
    const details = await provider.interactionDetails(request, response)
    if (details.uid !== uid) return page(response, 400, "<p>Not this interaction.</p>")
    if (request.method === "GET" && step === undefined) return page(response, 200, interactionPage(details))
    if (request.method !== "POST") return page(response, 405, "<p>Method not allowed.</p>")
    if (step === "login" && details.prompt.name === "login") {
      const form = await readForm(request)
      const account = accounts.find(
        (candidate) => candidate.login === form.get("login") && candidate.password === form.get("password")
      )
      if (account === undefined) return page(response, 401, interactionPage(details, "Wrong login or password."))
      return provider.interactionFinished(
        request,
        response,
        { login: { accountId: account.claims.sub } },
        { mergeWithLastSubmission: false }
      )
    }
    if (step === "confirm" && details.prompt.name === "consent") {
      const accountId = details.session?.accountId
      const clientId = details.params.client_id
      if (accountId === undefined || typeof clientId !== "string") return page(response, 400, "<p>No session.</p>")
      const existing = details.grantId === undefined ? undefined : await provider.Grant.find(details.grantId)
      const grant = existing ?? new provider.Grant({ accountId, clientId })
      const missing = details.prompt.details
      if (missing.missingOIDCScope !== undefined) grant.addOIDCScope(missing.missingOIDCScope.join(" "))
      if (missing.missingOIDCClaims !== undefined) grant.addOIDCClaims(missing.missingOIDCClaims)
      for (const [resource, scopes] of Object.entries(missing.missingResourceScopes ?? {})) {
        grant.addResourceScope(resource, scopes.join(" "))
      }
      const grantId = await grant.save()
      return provider.interactionFinished(
        request,
        response,
        { consent: { grantId } },
        { mergeWithLastSubmission: true }
      )
    }
    return page(response, 400, "<p>Not the step this interaction is at.</p>")
  }

  const providerCallback = provider.callback()
  handle = (request, response) => {
    const path = new URL(request.url ?? "/", issuer).pathname
    const match = /^\/interaction\/([\w-]+)(?:\/(login|confirm))?$/.exec(path)
    if (match?.[1] === undefined) return providerCallback(request, response)
    interaction(request, response, match[1], match[2]).catch((error: unknown) => {
      errors.push(`interaction: ${String(error)}`)
      if (!response.headersSent) page(response, 400, `<p>${htmlEscape(String(error))}</p>`)
    })
  }

  const discovery = (await (await fetch(`${issuer}/.well-known/openid-configuration`)).json()) as Discovery
  return {
    issuer,
    discovery,
    errors,
    close: () => {
      server.closeAllConnections()
      server.close()
    }
  }
}

/** The provider, running for the scope. */
export const oidcProvider = (options: OidcProviderOptions) =>
  Effect.acquireRelease(
    Effect.promise(() => start(options)),
    (running) => Effect.sync(() => running.close())
  ).pipe(Effect.map(({ close: _close, ...running }): RunningOidcProvider => running))

/**
 * A browser's cookie store, enough for one origin over plain http: cookies by name and path,
 * sent to the paths under theirs, dropped when expired.
 */
export class CookieJar {
  readonly #cookies = new Map<string, { readonly name: string; readonly value: string; readonly path: string }>()

  header(url: URL): string {
    return [...this.#cookies.values()]
      .filter((cookie) => url.pathname === cookie.path || url.pathname.startsWith(cookie.path.replace(/\/?$/, "/")))
      .map((cookie) => `${cookie.name}=${cookie.value}`)
      .join("; ")
  }

  store(response: Response): void {
    for (const header of response.headers.getSetCookie()) {
      const cookie = parseSetCookie(header)
      const path = cookie.attributes.get("path")
      const where = typeof path === "string" && path.startsWith("/") ? path : "/"
      const key = `${cookie.name};${where}`
      const maxAge = cookie.attributes.get("max-age")
      const expires = cookie.attributes.get("expires")
      const expired =
        (typeof maxAge === "string" && Number(maxAge) <= 0) ||
        (typeof expires === "string" && Date.parse(expires) <= Date.now())
      if (expired) this.#cookies.delete(key)
      else this.#cookies.set(key, { name: cookie.name, value: cookie.value, path: where })
    }
  }

  /** One request, as a browser would send it with this jar; redirects are the caller's. */
  async fetch(url: URL, init: { readonly method?: string; readonly form?: Record<string, string> } = {}) {
    const headers: Record<string, string> = { accept: "text/html" }
    const cookie = this.header(url)
    if (cookie !== "") headers.cookie = cookie
    const body = init.form === undefined ? undefined : new URLSearchParams(init.form).toString()
    if (body !== undefined) headers["content-type"] = "application/x-www-form-urlencoded"
    const response = await fetch(url, {
      method: init.method ?? "GET",
      headers,
      redirect: "manual",
      ...(body === undefined ? {} : { body })
    })
    this.store(response)
    return response
  }
}

export interface Credentials {
  readonly login: string
  readonly password: string
}

export interface Authorized {
  /** The provider's redirect to the client's redirect_uri, with code and state. */
  readonly callback: URL
  /** The interactions the provider asked for on the way, in order ("login", "consent"). */
  readonly prompts: ReadonlyArray<string>
}

/**
 * Follows an authorization URL as a browser with `jar` would: the provider's redirects, its
 * login form filled with `credentials`, its consent form submitted, up to the redirect to
 * `redirectUri`, which is not followed: its Location is the answer.
 */
export const authorize = async (
  jar: CookieJar,
  authorizationUrl: string,
  redirectUri: string,
  credentials: Credentials
): Promise<Authorized> => {
  const prompts: Array<string> = []
  let url = new URL(authorizationUrl)
  let response = await jar.fetch(url)
  for (let step = 0; step < 12; step++) {
    const location = response.headers.get("location")
    if (response.status >= 300 && response.status < 400 && location !== null) {
      await response.body?.cancel()
      url = new URL(location, url)
      if (url.href.startsWith(redirectUri)) return { callback: url, prompts }
      response = await jar.fetch(url)
      continue
    }
    const text = await response.text()
    const form = /<form method="post" action="([^"]+)" data-prompt="(\w+)">/.exec(text)
    if (response.status !== 200 || form?.[1] === undefined || form[2] === undefined) {
      throw new Error(`The provider answered ${response.status} at ${url.href}: ${text}`)
    }
    prompts.push(form[2])
    url = new URL(form[1], url)
    const fields = form[2] === "login" ? { login: credentials.login, password: credentials.password } : {}
    response = await jar.fetch(url, { method: "POST", form: fields })
  }
  throw new Error("The provider never redirected to the redirect_uri")
}
