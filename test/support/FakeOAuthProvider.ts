import { createHash, randomBytes } from "node:crypto"
import { createServer, type IncomingMessage, type ServerResponse } from "node:http"
import type { AddressInfo } from "node:net"
import { Effect, type Scope } from "effect"

/**
 * A fake OAuth provider on 127.0.0.1 speaking the HTTP shapes of every kind Portcullis knows:
 * token endpoints with client_secret_post and client_secret_basic, PKCE (S256), single-use
 * codes, GitHub's 200-with-error refusals, OpenID Connect userinfo (Google, GitLab), GitHub's
 * /user and /user/emails, Discord's /users/@me, and a custom userinfo.
 */

export type FakeKind = "google" | "github" | "discord" | "gitlab" | "custom"

export interface FakeClient {
  readonly id: string
  readonly secret: string
}

export interface FakeGrant {
  readonly clientId: string
  readonly redirectUri: string
  /** What the kind's user endpoint answers for the code's access token, as the provider writes it. */
  readonly userinfo: Readonly<Record<string, unknown>>
  /** GitHub: what /user/emails answers. */
  readonly emails?: ReadonlyArray<{ readonly email: string; readonly primary: boolean; readonly verified: boolean }>
  /** The S256 challenge of the authorization request, if it had one. */
  readonly codeChallenge?: string
}

/** How the next request, whichever it is, is answered instead. */
export type FakeFailure = "hang" | "500" | "malformed" | "redirect"

/**
 * How the next request to a path is stretched: its own answer, its headers as soon as the route
 * answers, then `padding` bytes of JSON whitespace written over `over` milliseconds (as fast as
 * the client reads when 0), then the body.
 */
export interface Stretch {
  readonly padding: number
  readonly over: number
}

/** What a stretched answer came to: the bytes written, and whether the client hung up before its end. */
export interface Stretched {
  readonly path: string
  readonly written: number
  readonly hungUp: boolean
}

export interface TokenRequest {
  readonly path: string
  readonly clientAuthentication: "client_secret_basic" | "client_secret_post" | "none"
  readonly params: Readonly<Record<string, string>>
}

/** Each kind's endpoints, as real providers lay them out, under /<kind>. */
const layout = {
  google: { token: "/google/token", userinfo: "/google/v1/userinfo" },
  github: { token: "/github/login/oauth/access_token", userinfo: "/github/user", emails: "/github/user/emails" },
  discord: { token: "/discord/api/oauth2/token", userinfo: "/discord/api/users/@me" },
  gitlab: { token: "/gitlab/oauth/token", userinfo: "/gitlab/oauth/userinfo" },
  custom: { token: "/custom/token", userinfo: "/custom/me" }
} as const satisfies Record<FakeKind, { token: string; userinfo: string; emails?: string }>

const s256 = (verifier: string) => createHash("sha256").update(verifier).digest("base64url")
const random = () => randomBytes(16).toString("base64url")

/** RFC 6749 2.3.1: client_secret_basic credentials are form-encoded before base64. */
const formDecode = (text: string) => decodeURIComponent(text.replace(/\+/g, " "))

const json = (response: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}) => {
  response.writeHead(status, { "content-type": "application/json; charset=utf-8", ...headers })
  response.end(JSON.stringify(body))
}

const readBody = (request: IncomingMessage) =>
  new Promise<string>((resolve, reject) => {
    const chunks: Array<Buffer> = []
    request.on("data", (chunk: Buffer) => chunks.push(chunk))
    request.on("end", () => resolve(Buffer.concat(chunks).toString("utf8")))
    request.on("error", reject)
  })

/** An ID token no checker would accept (foreign issuer and audience, long expired), to show it is never read. */
const unreadableIdToken = [
  Buffer.from(JSON.stringify({ alg: "RS256", kid: "none" })).toString("base64url"),
  Buffer.from(
    JSON.stringify({ iss: "https://elsewhere.example", aud: "another-client", sub: "x", exp: 1, iat: 0 })
  ).toString("base64url"),
  "not-a-signature"
].join(".")

const start = async (clients: ReadonlyArray<FakeClient>) => {
  const codes = new Map<string, FakeGrant>()
  const tokens = new Map<string, FakeGrant>()
  const tokenRequests: Array<TokenRequest> = []
  const paths: Array<string> = []
  let nextFailure: FakeFailure | undefined
  const failuresAt = new Map<string, FakeFailure>()
  const stretches = new Map<string, Stretch>()
  const stretched: Array<Stretched> = []
  const redirects = new Map<string, number>()

  /** Until the socket takes more, or closes. */
  const writable = (response: ServerResponse) =>
    new Promise<void>((resolve) => {
      const done = () => {
        response.off("drain", done).off("close", done)
        resolve()
      }
      response.on("drain", done).on("close", done)
    })

  /**
   * The answer's body held back behind the padding. Written as the socket takes it, so that a
   * client that stops reading stops the writing, and what was written tells what it read.
   */
  const stretch = (path: string, { padding, over }: Stretch, response: ServerResponse) => {
    const end = response.end.bind(response)
    const record = { path, written: 0, hungUp: false }
    stretched.push(record)
    response.on("close", () => {
      record.hungUp = !response.writableFinished
    })
    const chunk = 64 * 1024
    const steps = Math.max(1, Math.ceil(padding / chunk))
    const pause = over / steps
    response.end = ((body?: unknown) => {
      void (async () => {
        for (let left = padding; left > 0 && !response.destroyed; left -= chunk) {
          const size = Math.min(chunk, left)
          record.written += size
          const drained = response.write(" ".repeat(size))
          if (!drained) await writable(response)
          if (pause > 0) await new Promise((resolve) => setTimeout(resolve, pause))
        }
        if (!response.destroyed) end(body as string)
      })()
      return response
    }) as typeof response.end
  }

  const token = async (kind: FakeKind, request: IncomingMessage, response: ServerResponse) => {
    const params = Object.fromEntries(new URLSearchParams(await readBody(request)))
    const basic = /^Basic (.+)$/i.exec(request.headers.authorization ?? "")?.[1]
    const [basicId, basicSecret] = basic === undefined ? [] : Buffer.from(basic, "base64").toString("utf8").split(":")
    const clientAuthentication =
      basic !== undefined ? "client_secret_basic" : params.client_secret !== undefined ? "client_secret_post" : "none"
    tokenRequests.push({ path: request.url ?? "", clientAuthentication, params })
    // GitHub answers refusals with 200 and an error body; the others with OAuth's 4xx.
    const refuse = (error: string, status: number) =>
      kind === "github"
        ? json(response, 200, { error, error_description: "refused" })
        : json(response, status, { error })

    const clientId = basicId === undefined ? params.client_id : formDecode(basicId)
    const secret = basicSecret === undefined ? params.client_secret : formDecode(basicSecret)
    const client = clients.find((known) => known.id === clientId)
    if (client === undefined || client.secret !== secret) {
      return refuse(kind === "github" ? "incorrect_client_credentials" : "invalid_client", 401)
    }
    if (params.grant_type !== "authorization_code") return refuse("unsupported_grant_type", 400)
    const grant = codes.get(params.code ?? "")
    codes.delete(params.code ?? "")
    if (grant === undefined || grant.clientId !== client.id || grant.redirectUri !== params.redirect_uri) {
      return refuse(kind === "github" ? "bad_verification_code" : "invalid_grant", 400)
    }
    const verifier = params.code_verifier
    const pkceHolds =
      grant.codeChallenge === undefined
        ? verifier === undefined
        : verifier !== undefined && s256(verifier) === grant.codeChallenge
    if (!pkceHolds) return refuse("invalid_grant", 400)

    const accessToken = random()
    tokens.set(accessToken, grant)
    if (kind === "github")
      return json(response, 200, { access_token: accessToken, token_type: "bearer", scope: "read:user,user:email" })
    json(response, 200, {
      access_token: accessToken,
      token_type: "Bearer",
      expires_in: 3600,
      refresh_token: random(),
      scope: "openid email profile",
      ...(kind === "google" || kind === "gitlab" ? { id_token: unreadableIdToken } : {})
    })
  }

  const resource = (
    kind: FakeKind,
    request: IncomingMessage,
    response: ServerResponse,
    answer: (grant: FakeGrant) => unknown
  ) => {
    const grant = tokens.get(/^Bearer (.+)$/.exec(request.headers.authorization ?? "")?.[1] ?? "")
    if (grant === undefined) {
      return json(response, 401, { error: "invalid_token" }, { "www-authenticate": 'Bearer error="invalid_token"' })
    }
    // GitHub's API refuses requests without a User-Agent.
    if (kind === "github" && request.headers["user-agent"] === undefined) return json(response, 403, { message: "UA" })
    json(response, 200, answer(grant))
  }

  const routes = new Map<string, (request: IncomingMessage, response: ServerResponse) => unknown>()
  /** Who a browser at the authorization endpoint is signed in as, by kind (`signInAs`). */
  const browserUsers = new Map<FakeKind, Omit<FakeGrant, "clientId" | "redirectUri" | "codeChallenge">>()
  for (const [kind, at] of Object.entries(layout) as Array<[FakeKind, (typeof layout)[FakeKind]]>) {
    // A browser's authorization: approved at once for the user `signInAs` named, back to the redirect URI.
    routes.set(`GET /${kind}/authorize`, (request, response) => {
      const query = new URL(request.url ?? "", "http://fake").searchParams
      const who = browserUsers.get(kind)
      const redirectUri = query.get("redirect_uri") ?? ""
      if (who === undefined || redirectUri === "") return json(response, 400, { error: "invalid_request" })
      const challenge = query.get("code_challenge")
      const code = random()
      codes.set(code, {
        clientId: query.get("client_id") ?? "",
        redirectUri,
        ...who,
        ...(challenge === null ? {} : { codeChallenge: challenge })
      })
      const back = new URL(redirectUri)
      back.searchParams.set("code", code)
      back.searchParams.set("state", query.get("state") ?? "")
      response.writeHead(302, { location: back.href })
      response.end()
    })
    routes.set(`POST ${at.token}`, (request, response) => token(kind, request, response))
    routes.set(`GET ${at.userinfo}`, (request, response) =>
      resource(kind, request, response, (grant) => grant.userinfo)
    )
    if ("emails" in at) {
      routes.set(`GET ${at.emails}`, (request, response) =>
        resource(kind, request, response, (grant) => grant.emails ?? [])
      )
    }
  }

  const server = createServer((request, response) => {
    paths.push(request.url ?? "")
    const path = request.url?.split("?")[0] ?? ""
    const stretching = stretches.get(path)
    stretches.delete(path)
    if (stretching !== undefined) stretch(path, stretching, response)
    const redirect = redirects.get(path)
    redirects.delete(path)
    if (redirect !== undefined) {
      response.writeHead(redirect, { location: `http://127.0.0.1:${port}${request.url ?? ""}` })
      return response.end()
    }
    // A failure meant for this path comes first, and leaves the next request's for another.
    const failure = failuresAt.get(path) ?? nextFailure
    if (failuresAt.has(path)) failuresAt.delete(path)
    else nextFailure = undefined
    if (failure === "hang") return
    if (failure === "500") return json(response, 500, { error: "server_error" })
    if (failure === "malformed") {
      response.writeHead(200, { "content-type": "application/json" })
      return response.end('{"access_token": "cut sh')
    }
    if (failure === "redirect") {
      response.writeHead(302, { location: `http://127.0.0.1:${port}/elsewhere` })
      return response.end()
    }
    const route = routes.get(`${request.method} ${request.url?.split("?")[0]}`)
    if (route === undefined) return json(response, 404, { error: "not_found" })
    Promise.resolve(route(request, response)).catch(() => json(response, 500, { error: "fake_failed" }))
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  const port = (server.address() as AddressInfo).port
  const base = `http://127.0.0.1:${port}`

  return {
    url: base,
    /** The kind's token and user endpoints on this fake. */
    endpoints: (kind: FakeKind) => {
      const at: { token: string; userinfo: string; emails?: string } = layout[kind]
      return {
        authorization: `${base}/${kind}/authorize`,
        token: `${base}${at.token}`,
        userinfo: `${base}${at.userinfo}`,
        ...(at.emails === undefined ? {} : { emails: `${base}${at.emails}` })
      }
    },
    /** The user a browser at the kind's authorization endpoint approves as, at once. */
    signInAs: (kind: FakeKind, who: Omit<FakeGrant, "clientId" | "redirectUri" | "codeChallenge">) => {
      browserUsers.set(kind, who)
    },
    /** A single-use code, as if the user had approved the authorization request. */
    issueCode: (grant: FakeGrant) => {
      const code = random()
      codes.set(code, grant)
      return code
    },
    failNext: (failure: FakeFailure) => {
      nextFailure = failure
    },
    /**
     * The next request to `path` (a path of `endpoints`, without origin) is answered with
     * `failure`: one step of an exchange fails while the steps before it answer.
     */
    failNextAt: (path: string, failure: FakeFailure) => {
      failuresAt.set(path, failure)
    },
    /** The next request to `path` (a path of `endpoints`, without origin) answers stretched. */
    stretchNext: (path: string, how: Stretch) => {
      stretches.set(path, how)
    },
    /**
     * The next request to `path` is sent back to the same URL with `status` (307 keeps the method
     * and body): a client that follows redirects gets the real answer on the second request.
     */
    redirectNext: (path: string, status = 307) => {
      redirects.set(path, status)
    },
    /** Every stretched answer so far, oldest first. */
    stretched: stretched as ReadonlyArray<Stretched>,
    tokenRequests: tokenRequests as ReadonlyArray<TokenRequest>,
    /** Every access token the fake issued, oldest first. */
    accessTokens: () => [...tokens.keys()],
    /** The path of every request received, in order. */
    paths: paths as ReadonlyArray<string>,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections()
        server.close(() => resolve())
      })
  }
}

export type FakeOAuthProvider = Omit<Awaited<ReturnType<typeof start>>, "close">

/** A fake provider for as long as the scope lives, knowing these clients. */
export const fakeOAuthProvider = (
  clients: ReadonlyArray<FakeClient>
): Effect.Effect<FakeOAuthProvider, never, Scope.Scope> =>
  Effect.acquireRelease(
    Effect.promise(() => start(clients)),
    (fake) => Effect.promise(fake.close)
  )

/**
 * A custom provider's registration (SERVICE_OAUTH_CUSTOM_PROVIDERS) on the fake's `custom`
 * endpoints, for `client`, returning to `redirectUris`; its userinfo is `{uid, mail, mail_ok, display}`.
 */
export const customProviderOn = (
  fake: FakeOAuthProvider,
  name: string,
  client: FakeClient,
  redirectUris: ReadonlyArray<string>
) => {
  const at = fake.endpoints("custom")
  return {
    name,
    authorization_endpoint: at.authorization,
    token_endpoint: at.token,
    userinfo_endpoint: at.userinfo,
    scopes: ["openid"],
    pkce: true,
    client_id: client.id,
    client_secret: client.secret,
    redirect_uris: redirectUris,
    claims: { provider_user_id: "uid", email: "mail", email_verified: "mail_ok", name: "display" }
  }
}
