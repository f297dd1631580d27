import { describe, expect, layer } from "@effect/vitest"
import { Context, Effect, Layer } from "effect"
import type { ClientMetadata } from "oidc-provider"
import { call, expectProblem, me, signUp } from "../support/flows.js"
import {
  authorize,
  CookieJar,
  type Credentials,
  oidcProvider,
  type ProviderAccount,
  type RunningOidcProvider
} from "../support/OidcProvider.js"
import * as TestApp from "../support/TestApp.js"

/**
 * Sign-in and linking end to end against a real OpenID provider, oidc-provider v9, running on
 * 127.0.0.1 inside the test: Portcullis's authorization URL followed by a browser with cookies,
 * the provider's own login and consent forms submitted over HTTP, its redirect to the
 * allow-listed redirect_uri read (not served), and the code, state and binding handed to
 * Portcullis's callbacks. Portcullis knows the provider twice, as a self-hosted `gitlab` (an
 * OpenID Connect kind, PKCE by default) with its three endpoints overridden from the provider's
 * discovery document, and as a custom provider from SERVICE_OAUTH_CUSTOM_PROVIDERS with PKCE
 * turned on; the provider requires PKCE of every client.
 */

/** Where the provider sends the browser back: allow-listed in Portcullis, never served. */
const redirectUri = "http://localhost:8000/oauth/callback"

interface Configuration {
  readonly provider: string
  readonly description: string
  readonly client: ClientMetadata & { readonly client_secret: string }
}

const configurations: ReadonlyArray<Configuration> = [
  {
    provider: "gitlab",
    description: "the gitlab kind with its endpoints overridden",
    // Portcullis authenticates a gitlab client as GitLab documents it, in the form body.
    client: {
      client_id: "portcullis-gitlab",
      client_secret: "gitlab-client-secret-for-the-e2e-test",
      token_endpoint_auth_method: "client_secret_post"
    }
  },
  {
    provider: "local-oidc",
    description: "a custom provider with PKCE",
    // A custom provider's client authenticates with HTTP Basic, RFC 6749's default.
    client: {
      client_id: "portcullis custom:client",
      client_secret: "custom secret with spaces & symbols",
      token_endpoint_auth_method: "client_secret_basic"
    }
  }
]

/** Each configuration's provider accounts: one signs up through it, one is linked to a password user. */
const accountsOf = (provider: string) => {
  const account = (role: string): ProviderAccount => ({
    login: `${provider}-${role}`,
    password: `${role} password at ${provider}`,
    claims: {
      sub: `${provider}-${role}-subject`,
      email: `${role}.${provider}@provider.example`,
      email_verified: true,
      name: `${role} of ${provider}`
    }
  })
  return { newcomer: account("newcomer"), linked: account("linked") }
}

class Provider extends Context.Tag("test/OidcProvider")<Provider, RunningOidcProvider>() {}

const settingsFor = ({ discovery }: RunningOidcProvider): Record<string, string> => {
  const [gitlab, custom] = configurations
  if (gitlab === undefined || custom === undefined) throw new Error("two configurations expected")
  return {
    SERVICE_OAUTH_GITLAB_CLIENT_ID: gitlab.client.client_id,
    SERVICE_OAUTH_GITLAB_CLIENT_SECRET: gitlab.client.client_secret,
    SERVICE_OAUTH_GITLAB_REDIRECT_URIS: redirectUri,
    SERVICE_OAUTH_GITLAB_AUTHORIZATION_ENDPOINT: discovery.authorization_endpoint,
    SERVICE_OAUTH_GITLAB_TOKEN_ENDPOINT: discovery.token_endpoint,
    SERVICE_OAUTH_GITLAB_USERINFO_ENDPOINT: discovery.userinfo_endpoint,
    SERVICE_OAUTH_CUSTOM_PROVIDERS: JSON.stringify([
      {
        name: custom.provider,
        authorization_endpoint: discovery.authorization_endpoint,
        token_endpoint: discovery.token_endpoint,
        userinfo_endpoint: discovery.userinfo_endpoint,
        scopes: ["openid", "email", "profile"],
        pkce: true,
        client_id: custom.client.client_id,
        client_secret: custom.client.client_secret,
        redirect_uris: [redirectUri]
      }
    ])
  }
}

const service = Layer.unwrapScoped(
  Effect.map(
    oidcProvider({
      clients: configurations.map(({ client }) => ({
        ...client,
        redirect_uris: [redirectUri],
        grant_types: ["authorization_code"],
        response_types: ["code"]
      })),
      accounts: configurations.flatMap(({ provider }) => Object.values(accountsOf(provider)))
    }),
    (running) => Layer.merge(TestApp.layer("memory:", settingsFor(running)), Layer.succeed(Provider, running))
  )
)

interface Started {
  readonly authorization_url: string
  readonly binding: string
}

/** Portcullis's start of a flow: the authorization URL, checked against the provider, and the binding. */
const started = (path: string, token?: string) =>
  Effect.gen(function* () {
    const { discovery } = yield* Provider
    const reply = yield* call("GET", `${path}?redirect_uri=${encodeURIComponent(redirectUri)}`, {
      ...(token === undefined ? {} : { token })
    })
    expect(reply.status).toBe(200)
    const body = reply.body as Started
    expect(body).toEqual({ authorization_url: expect.any(String), binding: expect.any(String) })
    const url = new URL(body.authorization_url)
    expect(`${url.origin}${url.pathname}`).toBe(discovery.authorization_endpoint)
    expect(url.searchParams.get("response_type")).toBe("code")
    expect(url.searchParams.get("redirect_uri")).toBe(redirectUri)
    expect(url.searchParams.get("code_challenge_method")).toBe("S256")
    expect(discovery.code_challenge_methods_supported).toContain("S256")
    // The binding stays with the client; the browser only ever sees the state.
    expect(body.authorization_url).not.toContain(body.binding)
    const state = url.searchParams.get("state")
    expect(state).toEqual(expect.any(String))
    return { ...body, state: state ?? "" }
  })

/** The browser's trip through the provider, up to the redirect back with code and state. */
const throughProvider = (jar: CookieJar, authorizationUrl: string, credentials: Credentials) =>
  Effect.gen(function* () {
    const provider = yield* Provider
    const { callback, prompts } = yield* Effect.tryPromise(() =>
      authorize(jar, authorizationUrl, redirectUri, credentials)
    ).pipe(
      Effect.orDieWith(
        (error) => new Error(`${String(error.cause)}\nprovider errors: ${provider.errors.join("\n") || "none"}`)
      )
    )
    expect(`${callback.origin}${callback.pathname}`).toBe(redirectUri)
    expect(callback.searchParams.get("error")).toBeNull()
    // RFC 9207: the provider names itself in the authorization response.
    expect(callback.searchParams.get("iss")).toBe(provider.issuer)
    return { code: callback.searchParams.get("code") ?? "", state: callback.searchParams.get("state"), prompts }
  })

interface LoginBody {
  readonly access_token: string
  readonly refresh_token: string
  readonly user: { readonly id: string | number; readonly email: string; readonly is_verified: boolean }
}

const expectNoProviderErrors = Effect.flatMap(Provider, (provider) =>
  Effect.sync(() => expect(provider.errors).toEqual([]))
)

describe("OAuth against a real OpenID provider (oidc-provider)", () => {
  layer(service, { excludeTestServices: true })((it) => {
    for (const { provider, description } of configurations) {
      const { newcomer, linked } = accountsOf(provider)

      it.effect(
        `${description}: sign-in through the provider's login and consent creates a verified user; the same browser signs in again as that user`,
        () =>
          Effect.gen(function* () {
            const start = yield* started(`/oauth/${provider}/authorize`)
            const jar = new CookieJar()
            const back = yield* throughProvider(jar, start.authorization_url, newcomer)
            expect(back.prompts).toEqual(["login", "consent"])
            expect(back.state).toBe(start.state)

            const signedIn = yield* call("POST", `/oauth/${provider}/callback`, {
              json: { code: back.code, state: start.state, binding: start.binding }
            })
            expect(signedIn.status).toBe(200)
            const body = signedIn.body as LoginBody
            expect(body).toMatchObject({
              access_token: expect.any(String),
              refresh_token: expect.any(String),
              token_type: "bearer",
              expires_in: expect.any(Number),
              user: { email: newcomer.claims.email, is_verified: true, is_active: true, is_superuser: false }
            })
            const profile = yield* me(body.access_token)
            expect(profile.status).toBe(200)
            expect(profile.body).toMatchObject({ id: body.user.id, email: newcomer.claims.email, is_verified: true })
            const accounts = yield* call("GET", "/oauth/accounts", { token: body.access_token })
            expect(accounts.status).toBe(200)
            expect(accounts.body).toEqual([
              {
                provider,
                provider_user_id: newcomer.claims.sub,
                provider_email: newcomer.claims.email,
                created_at: expect.any(String)
              }
            ])

            // The state is spent: the same callback again is refused.
            expectProblem(
              yield* call("POST", `/oauth/${provider}/callback`, {
                json: { code: back.code, state: start.state, binding: start.binding }
              }),
              400,
              "OAuthError"
            )

            // The provider remembers the browser's session and grant: no interaction, the same user.
            const again = yield* started(`/oauth/${provider}/authorize`)
            const returning = yield* throughProvider(jar, again.authorization_url, newcomer)
            expect(returning.prompts).toEqual([])
            const second = yield* call("POST", `/oauth/${provider}/callback`, {
              json: { code: returning.code, state: again.state, binding: again.binding }
            })
            expect(second.status).toBe(200)
            expect((second.body as LoginBody).user).toMatchObject({ id: body.user.id, email: newcomer.claims.email })
            yield* expectNoProviderErrors
          })
      )

      it.effect(`${description}: a password user links a provider account, which then signs that user in`, () =>
        Effect.gen(function* () {
          const session = yield* signUp("linker")
          const start = yield* started(`/oauth/${provider}/link/authorize`, session.access)
          const back = yield* throughProvider(new CookieJar(), start.authorization_url, linked)
          expect(back.prompts).toEqual(["login", "consent"])
          expect(back.state).toBe(start.state)

          const link = yield* call("POST", `/oauth/${provider}/link/callback`, {
            token: session.access,
            json: { code: back.code, state: start.state, binding: start.binding }
          })
          expect(link.status).toBe(200)
          expect(link.body).toEqual({
            provider,
            provider_user_id: linked.claims.sub,
            provider_email: linked.claims.email
          })
          const accounts = yield* call("GET", "/oauth/accounts", { token: session.access })
          expect(accounts.body).toEqual([
            {
              provider,
              provider_user_id: linked.claims.sub,
              provider_email: linked.claims.email,
              created_at: expect.any(String)
            }
          ])
          // Linking edits nothing about the user: same address, still unverified.
          expect((yield* me(session.access)).body).toMatchObject({ email: session.email, is_verified: false })

          // The linked provider account now signs in the password user.
          const signIn = yield* started(`/oauth/${provider}/authorize`)
          const viaProvider = yield* throughProvider(new CookieJar(), signIn.authorization_url, linked)
          const signedIn = yield* call("POST", `/oauth/${provider}/callback`, {
            json: { code: viaProvider.code, state: signIn.state, binding: signIn.binding }
          })
          expect(signedIn.status).toBe(200)
          expect((signedIn.body as LoginBody).user).toMatchObject({ id: session.id, email: session.email })
          yield* expectNoProviderErrors
        })
      )
    }
  })
})
