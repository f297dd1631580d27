import { generateKeyPairSync } from "node:crypto"
import { Effect, type Layer, ManagedRuntime } from "effect"
import * as oidc from "openid-client"
import { afterAll, beforeAll, expect } from "vitest"
import { Cryptography } from "../../application/ports/Cryptography.js"
import type { OidcClients } from "../../application/ports/OidcClients.js"
import type { OidcResources } from "../../application/ports/OidcResources.js"
import type { Deployment } from "../../config/Deployment.js"
import { password, register, uniqueEmail } from "./flows.js"
import { addClient } from "./oidcFixtures.js"
import * as TestApp from "./TestApp.js"

/**
 * A running Portcullis with the OpenID Provider on, for suites that drive it as a relying party
 * and a browser would: its clients (a confidential `wiki`, a public `cli-tool`), users made on
 * demand, openid-client configured for a client, and the browser's part (the authorization URL
 * followed, the sign-in and consent done through the JSON routes the hosted pages call).
 */

const providerKey = generateKeyPairSync("rsa", { modulusLength: 2048 }).privateKey.export({
  format: "pem",
  type: "pkcs8"
}) as string

export const confidential = { id: "wiki", secret: "wiki-secret-for-the-provider-e2e" }
export const publicClient = { id: "cli-tool" }
export const redirectUri = "https://app.example.com/cb"
export const loggedOut = "https://app.example.com/signed-out"

/**
 * The browser signs in for a parked authorization `request` through the route the hosted sign-in
 * page calls (`route` names a path under the auth prefix): the cookies in the jar, where it goes next.
 */
export const signInParked = async (
  route: (path: string) => string,
  { request, email, jar }: { readonly request: string; readonly email: string; readonly jar: Jar }
) => {
  const signedIn = await fetch(route("/oauth2/session"), {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ email, password, request })
  })
  expect(signedIn.status).toBe(200)
  jar.take(signedIn.headers)
  return new URL(((await signedIn.json()) as { continue: string }).continue)
}

/** The user allows the parked `request` on the consent route, with the session's CSRF binding: where the browser goes next. */
export const allowParked = async (
  route: (path: string) => string,
  { request, jar }: { readonly request: string; readonly jar: Jar }
) => {
  const answered = await fetch(route("/oauth2/consent"), {
    method: "POST",
    headers: {
      "content-type": "application/json",
      cookie: jar.header,
      "x-csrf-token": jar.cookies.get("portcullis_op_csrf") ?? ""
    },
    body: JSON.stringify({ request, approve: true })
  })
  expect(answered.status).toBe(200)
  return new URL(((await answered.json()) as { continue: string }).continue)
}

/** A browser's cookies for the provider's routes: just what a jar keeps. */
export class Jar {
  readonly cookies = new Map<string, string>()
  take(headers: Headers) {
    for (const line of headers.getSetCookie()) {
      const [pair] = line.split(";")
      const at = pair?.indexOf("=") ?? -1
      if (pair === undefined || at === -1) continue
      const name = pair.slice(0, at)
      const value = pair.slice(at + 1)
      if (/max-age=0|expires=thu, 01 jan 1970/i.test(line) || value === "") this.cookies.delete(name)
      else this.cookies.set(name, value)
    }
  }
  get header() {
    return [...this.cookies].map(([name, value]) => `${name}=${value}`).join("; ")
  }
}

type Services = TestApp.TestApp | Cryptography | OidcClients | OidcResources

/** Registers the provider's server around the suite (beforeAll, afterAll) and answers its handle. */
/** What a suite changes in the provider's server. */
export interface ProviderOptions {
  /** Settings beside the provider's own; a function of PUBLIC_URL when they must name it. */
  readonly env?: Record<string, string> | ((base: string) => Record<string, string>)
  readonly deployment?: Deployment
  /** More confidential clients, redirecting where `wiki` does. */
  readonly more?: ReadonlyArray<{ readonly id: string; readonly secret: string }>
  /** The host of PUBLIC_URL (127.0.0.1 unless given): `localhost` for passkeys, whose relying party is a domain. */
  readonly host?: string
}

export const useProvider = (backend: TestApp.Backend, options: ProviderOptions = {}) => {
  const { env = {}, deployment = {}, more = [], host = "127.0.0.1" } = options
  let runtime: ManagedRuntime.ManagedRuntime<Services, unknown> | undefined
  const place = { base: "", issuer: "", authPrefix: "" }

  beforeAll(async () => {
    const port = await TestApp.freePort()
    place.base = `http://${host}:${port}`
    const app = TestApp.layer(
      backend,
      {
        SERVICE_PUBLIC_URL: place.base,
        SERVICE_OIDC_PROVIDER_ENABLED: "true",
        SERVICE_OIDC_PRIVATE_KEY: providerKey,
        ...(typeof env === "function" ? env(place.base) : env)
      },
      { port, deployment }
    )
    runtime = ManagedRuntime.make(app as Layer.Layer<Services, unknown>)
    const settings = await runtime.runPromise(Effect.map(TestApp.TestApp, (running) => running.settings))
    place.issuer = settings.oidc.issuer
    place.authPrefix = settings.server.authPrefix
    await runtime.runPromise(
      Effect.gen(function* () {
        const crypto = yield* Cryptography
        yield* addClient(confidential.id, {
          name: "Team wiki",
          secret_digest: crypto.digest(confidential.secret),
          post_logout_redirect_uris: [loggedOut]
        })
        for (const client of more) {
          yield* addClient(client.id, { name: client.id, secret_digest: crypto.digest(client.secret) })
        }
        yield* addClient(publicClient.id, {
          name: "A CLI",
          public: true,
          secret_digest: null,
          redirect_uris: [redirectUri, "http://127.0.0.1/cb"]
        })
      })
    )
  }, 60_000)
  afterAll(() => runtime?.dispose())

  const run = <A, E>(effect: Effect.Effect<A, E, Services>) => {
    if (runtime === undefined) throw new Error("the provider's server is not running")
    return runtime.runPromise(effect)
  }

  /** The absolute URL of a route under the auth prefix. */
  const route = (path: string) => `${place.base}${place.authPrefix}${path}`

  const newUser = async () => {
    const email = uniqueEmail("op")
    await run(register(email))
    return email
  }

  const configFor = (client: { id: string; secret?: string }) =>
    oidc.discovery(
      new URL(place.issuer),
      client.id,
      client.secret === undefined ? undefined : { client_secret: client.secret },
      client.secret === undefined ? oidc.None() : oidc.ClientSecretBasic(client.secret),
      { execute: [oidc.allowInsecureRequests] }
    )

  const signIn = (request: string, email: string, jar: Jar) => signInParked(route, { request, email, jar })
  const allow = (request: string, jar: Jar) => allowParked(route, { request, jar })

  /** The browser's part: the authorization URL followed, the sign-in and consent done through the JSON routes. */
  const browse = async (authorizationUrl: URL, email: string, jar = new Jar()) => {
    const first = await fetch(authorizationUrl, { redirect: "manual", headers: { cookie: jar.header } })
    expect(first.status).toBe(303)
    let location = new URL(first.headers.get("location") ?? "")
    if (location.pathname.endsWith("/oauth2/sign-in")) {
      location = await signIn(location.searchParams.get("request") ?? "", email, jar)
    }
    if (location.pathname.endsWith("/oauth2/consent")) {
      const request = location.searchParams.get("request") ?? ""
      const prompt = await fetch(location, { headers: { cookie: jar.header, accept: "application/json" } })
      expect(prompt.status).toBe(200)
      expect(await prompt.json()).toMatchObject({ client_id: expect.any(String), scopes: expect.any(Array) })
      location = await allow(request, jar)
    }
    return { callback: location, jar }
  }

  /** An authorization request of `config`'s client with PKCE, a nonce and a state, and what its answer is checked with. */
  const start = async (config: oidc.Configuration, scope: string, extra: Record<string, string> = {}) => {
    const verifier = oidc.randomPKCECodeVerifier()
    const nonce = oidc.randomNonce()
    const state = oidc.randomState()
    const url = oidc.buildAuthorizationUrl(config, {
      redirect_uri: redirectUri,
      scope,
      code_challenge: await oidc.calculatePKCECodeChallenge(verifier),
      code_challenge_method: "S256",
      nonce,
      state,
      ...extra
    })
    return { url, checks: { pkceCodeVerifier: verifier, expectedNonce: nonce, expectedState: state } }
  }

  return {
    get base() {
      return place.base
    },
    get issuer() {
      return place.issuer
    },
    get authPrefix() {
      return place.authPrefix
    },
    route,
    run,
    newUser,
    configFor,
    signIn,
    allow,
    browse,
    start
  }
}
