import { randomInt } from "node:crypto"
import { expect } from "@effect/vitest"
import { Context, Effect, Layer } from "effect"
import type { Deployment } from "../../config/Deployment.js"
import type { CustomOAuthProvider } from "../../config/oauthProviders.js"
import { type FakeOAuthProvider, fakeOAuthProvider } from "./FakeOAuthProvider.js"
import { call, uniqueEmail } from "./flows.js"
import * as TestApp from "./TestApp.js"

/**
 * OAuth flows driven over HTTP against the fake provider: every built-in kind configured through
 * settings with the fake's endpoints, `acme` through SERVICE_OAUTH_CUSTOM_PROVIDERS and `corp`
 * in code, through the deployment.
 */

export const REDIRECT = "https://app.example/oauth/callback"

export const builtInKinds = ["google", "github", "discord", "gitlab"] as const
export type Provider = (typeof builtInKinds)[number] | "acme" | "corp"
export const providers: ReadonlyArray<Provider> = [...builtInKinds, "acme", "corp"]

const clientOf = (provider: Provider) => ({ id: `${provider}-client`, secret: `${provider} secret+/:%` })

export class Fake extends Context.Tag("test/FakeOAuthProvider")<Fake, FakeOAuthProvider>() {}

const providerSettings = (fake: FakeOAuthProvider): Record<string, string> => {
  const env: Record<string, string> = {}
  for (const kind of builtInKinds) {
    const name = `SERVICE_OAUTH_${kind.toUpperCase()}`
    const at = fake.endpoints(kind)
    Object.assign(env, {
      [`${name}_CLIENT_ID`]: clientOf(kind).id,
      [`${name}_CLIENT_SECRET`]: clientOf(kind).secret,
      [`${name}_REDIRECT_URIS`]: REDIRECT,
      [`${name}_AUTHORIZATION_ENDPOINT`]: at.authorization,
      [`${name}_TOKEN_ENDPOINT`]: at.token,
      [`${name}_USERINFO_ENDPOINT`]: at.userinfo,
      ...(at.emails === undefined ? {} : { [`${name}_EMAILS_ENDPOINT`]: at.emails })
    })
  }
  const custom = fake.endpoints("custom")
  env.SERVICE_OAUTH_CUSTOM_PROVIDERS = JSON.stringify([
    {
      name: "acme",
      authorization_endpoint: custom.authorization,
      token_endpoint: custom.token,
      userinfo_endpoint: custom.userinfo,
      scopes: ["openid"],
      pkce: true,
      client_id: clientOf("acme").id,
      client_secret: clientOf("acme").secret,
      redirect_uris: [REDIRECT],
      claims: { provider_user_id: "uid", email: "mail", email_verified: "mail_ok", name: "display" }
    }
  ])
  return env
}

const codeProviders = (fake: FakeOAuthProvider): ReadonlyArray<CustomOAuthProvider> => {
  const custom = fake.endpoints("custom")
  return [
    {
      name: "corp",
      authorization_endpoint: custom.authorization,
      token_endpoint: custom.token,
      userinfo_endpoint: custom.userinfo,
      client_id: clientOf("corp").id,
      client_secret: clientOf("corp").secret,
      redirect_uris: [REDIRECT],
      userInfo: (userinfo) => ({
        provider_user_id: String(userinfo.uid),
        email: typeof userinfo.mail === "string" ? userinfo.mail : null,
        email_verified: userinfo.mail_ok === "yes",
        name: null,
        picture: null
      })
    }
  ]
}

/** The service with every provider pointing at one fake, which the tests reach as `Fake`. */
export const appWithProviders = (
  backend: string | TestApp.Backend,
  env: Record<string, string> = {},
  deployment: Deployment = {}
) =>
  Layer.unwrapScoped(
    Effect.map(fakeOAuthProvider(providers.map(clientOf)), (fake) =>
      Layer.merge(
        TestApp.layer(
          backend,
          { ...providerSettings(fake), ...env },
          {
            deployment: { ...deployment, oauthProviders: codeProviders(fake) }
          }
        ),
        Layer.succeed(Fake, fake)
      )
    )
  )

/** Someone as a provider knows them. */
export interface Person {
  readonly id: string
  readonly email: string | null
  readonly verified: boolean
  readonly name: string
}

export const person = (label = "oauth", overrides: Partial<Person> = {}): Person => ({
  id: String(randomInt(1, 2 ** 31)),
  email: uniqueEmail(label),
  verified: true,
  name: "Ada Lovelace",
  ...overrides
})

/** What each kind's user endpoints answer for `who`, in that provider's own words. */
const userinfoOf = (provider: Provider, who: Person) => {
  switch (provider) {
    case "google":
    case "gitlab":
      return {
        userinfo: { sub: who.id, email: who.email, email_verified: who.verified, name: who.name, picture: null }
      }
    case "github":
      return {
        userinfo: { id: Number(who.id), login: "ada", name: who.name, avatar_url: "https://avatars.example/ada" },
        emails:
          who.email === null
            ? []
            : [
                { email: "old@example.org", primary: false, verified: true },
                { email: who.email, primary: true, verified: who.verified }
              ]
      }
    case "discord":
      return {
        userinfo: {
          id: who.id,
          username: "ada",
          global_name: who.name,
          avatar: "a1b2c3",
          email: who.email,
          verified: who.verified
        }
      }
    case "acme":
      return { userinfo: { uid: who.id, mail: who.email, mail_ok: who.verified, display: who.name } }
    case "corp":
      return { userinfo: { uid: who.id, mail: who.email, mail_ok: who.verified ? "yes" : "no" } }
  }
}

/** A flow as the client sees it after authorize: the state travels in the URL, the binding stays. */
export interface Started {
  readonly provider: Provider
  readonly authorizationUrl: URL
  readonly state: string
  readonly binding: string
}

const flowPath = (provider: string, link: boolean) => `/oauth/${provider}${link ? "/link" : ""}`

export const authorize = (provider: string, options: { readonly token?: string; readonly redirect?: string } = {}) =>
  call(
    "GET",
    `${flowPath(provider, options.token !== undefined)}/authorize?redirect_uri=${encodeURIComponent(options.redirect ?? REDIRECT)}`,
    options.token === undefined ? {} : { token: options.token }
  )

/** Starts a sign-in (or, with a token, a link) flow; fails the test unless authorize answers 200. */
export const begin = (provider: Provider, token?: string) =>
  Effect.gen(function* () {
    const reply = yield* authorize(provider, token === undefined ? {} : { token })
    expect(reply.status).toBe(200)
    const body = reply.body as { authorization_url: string; binding: string }
    const authorizationUrl = new URL(body.authorization_url)
    return {
      provider,
      authorizationUrl,
      state: authorizationUrl.searchParams.get("state") ?? "",
      binding: body.binding
    } satisfies Started
  })

/** The provider's user approving the authorization request: a code for `who`. */
export const approve = (started: Started, who: Person, changes: { readonly codeChallenge?: string } = {}) =>
  Effect.map(Fake, (fake) => {
    const params = started.authorizationUrl.searchParams
    const challenge = changes.codeChallenge ?? params.get("code_challenge") ?? undefined
    return fake.issueCode({
      clientId: params.get("client_id") ?? "",
      redirectUri: params.get("redirect_uri") ?? "",
      ...userinfoOf(started.provider, who),
      ...(challenge === undefined ? {} : { codeChallenge: challenge })
    })
  })

export const callback = (provider: string, body: Record<string, unknown>, token?: string) =>
  call(
    "POST",
    `${flowPath(provider, token !== undefined)}/callback`,
    token === undefined ? { json: body } : { json: body, token }
  )

/** A whole sign-in (or link, with a token) through `provider` as `who`: the callback's reply. */
export const through = (provider: Provider, who: Person, token?: string) =>
  Effect.gen(function* () {
    const started = yield* begin(provider, token)
    const code = yield* approve(started, who)
    return yield* callback(provider, { code, state: started.state, binding: started.binding }, token)
  })

export interface SignedIn {
  readonly access: string
  readonly refresh: string
  readonly user: { readonly id: string | number; readonly email: string; readonly is_verified: boolean }
}

/** A sign-in through `provider` that must succeed. */
export const signInThrough = (provider: Provider, who: Person) =>
  Effect.map(through(provider, who), (reply) => {
    expect(reply.status, reply.text).toBe(200)
    const body = reply.body as { access_token: string; refresh_token: string; user: SignedIn["user"] }
    return { access: body.access_token, refresh: body.refresh_token, user: body.user } satisfies SignedIn
  })
