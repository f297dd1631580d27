import * as oidc from "openid-client"
import { afterAll, beforeAll } from "vitest"
import { CookieJar, type ProviderAccount, start } from "./OidcProvider.js"
import { confidential, redirectUri, useProvider } from "./openidProvider.js"

/**
 * An OpenID Provider as the conformance cases drive it, whichever it is: Portcullis, or
 * oidc-provider (the certified Node provider) configured alike (PKCE required, codes living 60 s,
 * the same clients and redirect URI), so that a case passing on Portcullis for the wrong reason
 * fails on the reference, or the other way round.
 */
export interface ProviderUnderTest {
  readonly name: string
  readonly issuer: () => string
  /** A confidential client authenticating with client_secret_basic, and one with client_secret_post. */
  readonly basic: { readonly id: string; readonly secret: string }
  readonly post: { readonly id: string; readonly secret: string }
  /** A user who can sign in. */
  readonly user: () => Promise<Credentials>
  /** A browser of its own (cookies kept between authorizations). */
  readonly browser: () => Browser
}

export interface Credentials {
  readonly login: string
  readonly password: string
}

export interface Browser {
  /** Follows the URL up to the app's redirect URI, signing in and consenting when asked; the interactions met, in order. */
  readonly authorize: (
    url: URL,
    user: Credentials
  ) => Promise<{ readonly callback: URL; readonly prompts: Array<string> }>
  /** Where the URL's first answer sends the browser (none for a page), and its status. */
  readonly first: (url: URL) => Promise<{ readonly status: number; readonly location: URL | undefined }>
}

const postSecret = "wiki-post-secret-for-the-conformance-cases"

/** openid-client's configuration of a client of `provider`. */
export const configOf = (provider: ProviderUnderTest, client: "basic" | "post") => {
  const { id, secret } = provider[client]
  return oidc.discovery(
    new URL(provider.issuer()),
    id,
    { client_secret: secret },
    client === "basic" ? oidc.ClientSecretBasic(secret) : oidc.ClientSecretPost(secret),
    { execute: [oidc.allowInsecureRequests] }
  )
}

const firstOf = async (jar: CookieJar, url: URL) => {
  const response = await jar.fetch(url)
  await response.body?.cancel()
  const location = response.headers.get("location")
  return { status: response.status, location: location === null ? undefined : new URL(location, url) }
}

/** Portcullis, the browser's part played on the JSON routes its hosted pages call. */
export const portcullisUnderTest = (): ProviderUnderTest => {
  const provider = useProvider(
    { name: "memory", databaseUrl: "memory:" },
    { more: [{ id: "wiki-post", secret: postSecret }] }
  )
  const post = async (jar: CookieJar, url: URL, body: unknown, headers: Record<string, string> = {}) => {
    const cookie = jar.header(url)
    const response = await fetch(url, {
      method: "POST",
      headers: { "content-type": "application/json", ...(cookie === "" ? {} : { cookie }), ...headers },
      body: JSON.stringify(body)
    })
    jar.store(response)
    const answer = (await response.json()) as { continue?: string }
    if (answer.continue === undefined) throw new Error(`${url.pathname} answered ${response.status}`)
    return new URL(answer.continue)
  }
  return {
    name: "Portcullis",
    issuer: () => provider.issuer,
    basic: confidential,
    post: { id: "wiki-post", secret: postSecret },
    user: async () => ({ login: await provider.newUser(), password: "correct horse battery staple" }),
    browser: () => {
      const jar = new CookieJar()
      return {
        first: (url) => firstOf(jar, url),
        authorize: async (url, user) => {
          const prompts: Array<string> = []
          let at = (await firstOf(jar, url)).location
          for (let step = 0; at !== undefined && step < 4; step++) {
            if (at.href.startsWith(redirectUri)) return { callback: at, prompts }
            const request = at.searchParams.get("request") ?? ""
            if (at.pathname.endsWith("/oauth2/sign-in")) {
              prompts.push("login")
              at = await post(jar, new URL(provider.route("/oauth2/session")), {
                email: user.login,
                password: user.password,
                request
              })
            } else if (at.pathname.endsWith("/oauth2/consent")) {
              prompts.push("consent")
              const consent = new URL(provider.route("/oauth2/consent"))
              const csrf = /portcullis_op_csrf=([^;]+)/.exec(jar.header(consent))?.[1] ?? ""
              at = await post(jar, consent, { request, approve: true }, { "x-csrf-token": csrf })
            } else break
          }
          throw new Error(`the authorization did not reach the redirect URI (${at?.href})`)
        }
      }
    }
  }
}

/** oidc-provider with the same clients, accounts made ahead. */
export const referenceUnderTest = (): ProviderUnderTest => {
  const accounts: Array<ProviderAccount> = Array.from({ length: 40 }, (_, n) => ({
    login: `user${n}@example.com`,
    password: `password of user ${n}`,
    claims: { sub: `user-${n}`, email: `user${n}@example.com`, email_verified: true, name: `User ${n}` }
  }))
  let running: Awaited<ReturnType<typeof start>> | undefined
  let next = 0
  beforeAll(async () => {
    running = await start({
      clients: [
        {
          client_id: confidential.id,
          client_secret: confidential.secret,
          redirect_uris: [redirectUri],
          token_endpoint_auth_method: "client_secret_basic"
        },
        {
          client_id: "wiki-post",
          client_secret: postSecret,
          redirect_uris: [redirectUri],
          token_endpoint_auth_method: "client_secret_post"
        }
      ],
      accounts
    })
  })
  afterAll(() => running?.close())
  return {
    name: "oidc-provider",
    issuer: () => running?.issuer ?? "",
    basic: confidential,
    post: { id: "wiki-post", secret: postSecret },
    user: async () => {
      const account = accounts[next++]
      if (account === undefined) throw new Error("no account left")
      return { login: account.login, password: account.password }
    },
    browser: () => {
      const jar = new CookieJar()
      return {
        first: (url) => firstOf(jar, url),
        authorize: async (url, user) => {
          const prompts: Array<string> = []
          let at = url
          let response = await jar.fetch(at)
          for (let step = 0; step < 12; step++) {
            const location = response.headers.get("location")
            if (response.status >= 300 && response.status < 400 && location !== null) {
              await response.body?.cancel()
              at = new URL(location, at)
              if (at.href.startsWith(redirectUri)) return { callback: at, prompts }
              response = await jar.fetch(at)
              continue
            }
            const text = await response.text()
            const form = /<form method="post" action="([^"]+)" data-prompt="(\w+)">/.exec(text)
            if (form?.[1] === undefined || form[2] === undefined) throw new Error(`${response.status}: ${text}`)
            prompts.push(form[2])
            at = new URL(form[1], at)
            const fields = form[2] === "login" ? { login: user.login, password: user.password } : {}
            response = await jar.fetch(at, { method: "POST", form: fields })
          }
          throw new Error("the authorization did not reach the redirect URI")
        }
      }
    }
  }
}

/** Both providers, Portcullis first. */
export const providersUnderTest = () => [portcullisUnderTest, referenceUnderTest] as const
