import { createHash } from "node:crypto"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Logger, LogLevel, Option, Redacted } from "effect"
import type { OAuthProviderClient } from "../../application/ports/OAuthProviders.js"
import type { OAuthProviderRegistration } from "../../domain/OAuthProvider.js"
import type { Options } from "../../infrastructure/oauth/OAuthProvidersOauth4webapi.js"
import * as OAuthProvidersOauth4webapi from "../../infrastructure/oauth/OAuthProvidersOauth4webapi.js"
import {
  type FakeGrant,
  type FakeKind,
  type FakeOAuthProvider,
  fakeOAuthProvider
} from "../support/FakeOAuthProvider.js"

const KINDS = ["google", "github", "discord", "gitlab", "custom"] as const
const REDIRECT = "https://app.example/oauth/callback"
const VERIFIER = "verifier-derived-from-the-state-nonce-0123456789"
/** Characters that client_secret_basic must form-encode. */
const secretOf = (kind: FakeKind) => `s3cret ${kind}+/:%`
const s256 = (verifier: string) => createHash("sha256").update(verifier).digest("base64url")

const baseConfig = (kind: FakeKind, overrides: Partial<OAuthProviderRegistration> = {}): OAuthProviderRegistration => ({
  name: kind === "custom" ? "acme" : kind,
  kind,
  clientId: `client-${kind}`,
  clientSecret: Redacted.make(secretOf(kind)),
  redirectUris: [REDIRECT, "http://localhost:5173/cb"],
  scopes: kind === "custom" ? Option.some(["openid", "profile"]) : Option.none(),
  authorizationEndpoint: kind === "custom" ? Option.some("https://idp.acme.example/authorize") : Option.none(),
  tokenEndpoint: kind === "custom" ? Option.some("https://idp.acme.example/token") : Option.none(),
  userinfoEndpoint: kind === "custom" ? Option.some("https://idp.acme.example/me") : Option.none(),
  emailsEndpoint: Option.none(),
  pkce: kind === "custom" ? Option.some(true) : Option.none(),
  claims: {},
  mapUserInfo: Option.none(),
  ...overrides
})

/** A provider of `kind` whose endpoints are the fake's. */
const fakeConfig = (fake: FakeOAuthProvider, kind: FakeKind, overrides: Partial<OAuthProviderRegistration> = {}) => {
  const at = fake.endpoints(kind)
  return baseConfig(kind, {
    authorizationEndpoint: Option.some(at.authorization),
    tokenEndpoint: Option.some(at.token),
    userinfoEndpoint: Option.some(at.userinfo),
    emailsEndpoint: Option.fromNullable(at.emails),
    ...overrides
  })
}

const clientFor = (config: OAuthProviderRegistration, options: Omit<Options, "providers"> = {}) =>
  OAuthProvidersOauth4webapi.make({ providers: [config], timeout: "300 millis", ...options }).pipe(
    Effect.map((providers) => Option.getOrThrow(providers.get(config.name)))
  )

const authorizationParams = (client: OAuthProviderClient, redirectUri = REDIRECT) =>
  client
    .authorizationUrl({ state: "signed.state.token", redirectUri, codeVerifier: VERIFIER })
    .pipe(Effect.map((url) => new URL(url)))

/** The fake approves a sign-in, then the client exchanges the code and reads the user: one exchange. */
const signIn = (
  fake: FakeOAuthProvider,
  kind: FakeKind,
  client: OAuthProviderClient,
  grant: Omit<FakeGrant, "redirectUri" | "clientId">
) =>
  Effect.gen(function* () {
    const code = fake.issueCode({ clientId: `client-${kind}`, redirectUri: REDIRECT, ...grant })
    return yield* client.identify({ code, redirectUri: REDIRECT, codeVerifier: VERIFIER })
  })

/** The path of the kind's endpoint on the fake, as its failures and stretches are keyed. */
const pathOf = (fake: FakeOAuthProvider, kind: FakeKind, endpoint: "token" | "userinfo") =>
  new URL(fake.endpoints(kind)[endpoint]).pathname

const withFake = <A, E>(body: (fake: FakeOAuthProvider) => Effect.Effect<A, E>) =>
  Effect.flatMap(fakeOAuthProvider(KINDS.map((kind) => ({ id: `client-${kind}`, secret: secretOf(kind) }))), body).pipe(
    Effect.provide(Logger.minimumLogLevel(LogLevel.Error))
  )

describe("authorization URL", () => {
  it.effect.each([
    ["google", "https://accounts.google.com/o/oauth2/v2/auth", "openid email profile"],
    ["github", "https://github.com/login/oauth/authorize", "read:user user:email"],
    ["discord", "https://discord.com/oauth2/authorize", "identify email"],
    ["gitlab", "https://gitlab.com/oauth/authorize", "openid email profile"],
    ["custom", "https://idp.acme.example/authorize", "openid profile"]
  ] as const)("%s: its endpoint, client, redirect URI, scopes, state and S256 challenge", ([kind, endpoint, scope]) =>
    Effect.gen(function* () {
      const url = yield* authorizationParams(yield* clientFor(baseConfig(kind)))
      expect(`${url.origin}${url.pathname}`).toBe(endpoint)
      expect(Object.fromEntries(url.searchParams)).toEqual({
        response_type: "code",
        client_id: `client-${kind}`,
        redirect_uri: REDIRECT,
        scope,
        state: "signed.state.token",
        code_challenge: s256(VERIFIER),
        code_challenge_method: "S256"
      })
    })
  )

  it.effect(
    "sends no challenge when PKCE is off: OAUTH_PKCE_ENABLED for built-in kinds, its own flag for a custom one",
    () =>
      Effect.gen(function* () {
        for (const client of [
          yield* clientFor(baseConfig("google"), { pkce: false }),
          yield* clientFor(baseConfig("custom", { pkce: Option.some(false) }))
        ]) {
          const params = (yield* authorizationParams(client)).searchParams
          expect([params.has("code_challenge"), params.has("code_challenge_method")]).toEqual([false, false])
        }
        // A custom provider's flag does not follow OAUTH_PKCE_ENABLED, and without one it uses PKCE.
        for (const pkce of [Option.some(true), Option.none()]) {
          const custom = yield* clientFor(baseConfig("custom", { pkce }), { pkce: false })
          const params = (yield* authorizationParams(custom)).searchParams
          expect([params.get("code_challenge"), params.get("code_challenge_method")]).toEqual([s256(VERIFIER), "S256"])
        }
      })
  )

  it.effect("configured scopes and endpoints replace the kind's (a self-hosted GitLab)", () =>
    Effect.gen(function* () {
      const client = yield* clientFor(
        baseConfig("gitlab", {
          scopes: Option.some(["read_user", "openid"]),
          authorizationEndpoint: Option.some("https://gitlab.example.org/oauth/authorize?tenant=a")
        })
      )
      const url = yield* authorizationParams(client)
      expect(`${url.origin}${url.pathname}`).toBe("https://gitlab.example.org/oauth/authorize")
      expect(url.searchParams.get("tenant")).toBe("a")
      expect(url.searchParams.get("scope")).toBe("read_user openid")
      const unscoped = yield* clientFor(baseConfig("custom", { scopes: Option.some([]) }))
      expect((yield* authorizationParams(unscoped)).searchParams.has("scope")).toBe(false)
    })
  )

  it.effect("refuses a redirect URI outside the allow-list, compared exactly as written", () =>
    Effect.gen(function* () {
      const client = yield* clientFor(baseConfig("github"))
      for (const uri of [
        `${REDIRECT}.evil.example`,
        "https://evil.example/oauth/callback",
        `${REDIRECT}/x`,
        "https://app.example/oauth/x/../callback",
        "https://app.example/oauth/%63allback",
        "HTTPS://APP.example/oauth/callback",
        "nonsense"
      ]) {
        const error = yield* Effect.flip(authorizationParams(client, uri))
        expect(error._tag).toBe("OAuthError")
      }
      const url = yield* authorizationParams(client, REDIRECT)
      expect(url.searchParams.get("redirect_uri")).toBe(REDIRECT)
    })
  )

  it.effect("lists the providers in configuration order, and has no client for another name", () =>
    Effect.gen(function* () {
      const providers = yield* OAuthProvidersOauth4webapi.make({
        providers: [baseConfig("github"), baseConfig("custom"), baseConfig("google")]
      })
      expect(providers.names).toEqual(["github", "acme", "google"])
      expect(Option.isNone(providers.get("gitlab"))).toBe(true)
    })
  )
})

const googleUser = {
  sub: "1089",
  email: "Alice@Gmail.com",
  email_verified: true,
  name: "Alice",
  picture: "https://lh3.example/a"
}
const gitlabUser = {
  sub: "42",
  email: "bob@gitlab.example",
  email_verified: false,
  name: "Bob",
  nickname: "bob",
  picture: null
}
const githubUser = {
  id: 1234,
  login: "octocat",
  name: null,
  email: "public@example.com",
  avatar_url: "https://avatars.example/u/1234"
}
const githubEmails = [
  { email: "work@example.com", primary: false, verified: true },
  { email: "Octo@Example.com", primary: true, verified: true },
  { email: "old@example.com", primary: false, verified: false }
]
const discordUser = {
  id: "80351110224678912",
  username: "nelly",
  global_name: null,
  avatar: "8342729096ea",
  email: "nelly@example.com",
  verified: true
}
const acmeUser = {
  user_id: 77,
  mail: "carol@acme.example",
  mail_confirmed: "true",
  display_name: "Carol",
  avatar: null
}
const acmeClaims = {
  provider_user_id: "user_id",
  email: "mail",
  email_verified: "mail_confirmed",
  name: "display_name",
  picture: "avatar"
}

describe("code exchange and user info, against a fake provider", () => {
  /** Kind, what its provider answers, extra settings, then the mapped provider, id, email, verified, name, picture. */
  it.scopedLive.each([
    ["google", { userinfo: googleUser }, {}, ["google", "1089", "Alice@Gmail.com", true, "Alice", googleUser.picture]],
    ["gitlab", { userinfo: gitlabUser }, {}, ["gitlab", "42", "bob@gitlab.example", false, "Bob", null]],
    [
      "github",
      { userinfo: githubUser, emails: githubEmails },
      {},
      ["github", "1234", "Octo@Example.com", true, "octocat", githubUser.avatar_url]
    ],
    [
      "discord",
      { userinfo: discordUser },
      {},
      [
        "discord",
        discordUser.id,
        "nelly@example.com",
        true,
        "nelly",
        `https://cdn.discordapp.com/avatars/${discordUser.id}/8342729096ea.png`
      ]
    ],
    [
      "custom",
      { userinfo: acmeUser },
      { claims: acmeClaims },
      ["acme", "77", "carol@acme.example", true, "Carol", null]
    ]
  ] as const)(
    "%s: the code is exchanged with the PKCE verifier, and the user mapped",
    ([kind, grant, overrides, [provider, provider_user_id, email, email_verified, name, picture]]) =>
      withFake((fake) =>
        Effect.gen(function* () {
          const client = yield* clientFor(fakeConfig(fake, kind, overrides))
          const { tokens, info } = yield* signIn(fake, kind, client, { ...grant, codeChallenge: s256(VERIFIER) })
          expect(info).toEqual({
            provider,
            provider_user_id,
            email,
            email_verified,
            name,
            picture,
            raw: grant.userinfo
          })
          expect(Redacted.value(tokens.access_token).length).toBeGreaterThan(0)
          expect([tokens.refresh_token !== undefined, tokens.expires_in]).toEqual(
            kind === "github" ? [false, undefined] : [true, 3600]
          )
          const [request] = fake.tokenRequests
          expect(request?.params.code_verifier).toBe(VERIFIER)
          expect(request?.clientAuthentication).toBe(
            kind === "discord" || kind === "custom" ? "client_secret_basic" : "client_secret_post"
          )
        })
      )
  )

  it.scopedLive("GitHub: a named user keeps its name; an unverified primary address is reported unverified", () =>
    withFake((fake) =>
      Effect.gen(function* () {
        const client = yield* clientFor(fakeConfig(fake, "github"))
        const emails = [
          { email: "work@example.com", primary: false, verified: true },
          { email: "new@example.com", primary: true, verified: false }
        ]
        const { info } = yield* signIn(fake, "github", client, {
          userinfo: { ...githubUser, name: "The Octocat" },
          emails,
          codeChallenge: s256(VERIFIER)
        })
        expect([info.name, info.email, info.email_verified]).toEqual(["The Octocat", "new@example.com", false])
      })
    )
  )

  it.scopedLive("Discord: global_name first; no avatar, no picture; an unverified email", () =>
    withFake((fake) =>
      Effect.gen(function* () {
        const client = yield* clientFor(fakeConfig(fake, "discord"))
        const userinfo = { ...discordUser, global_name: "Nelly G", avatar: null, verified: false }
        const { info } = yield* signIn(fake, "discord", client, { userinfo, codeChallenge: s256(VERIFIER) })
        expect([info.name, info.picture, info.email_verified]).toEqual(["Nelly G", null, false])
      })
    )
  )

  it.scopedLive("custom: the id is `sub`, or `id` when there is no `sub`, with the default claim keys", () =>
    withFake((fake) =>
      Effect.gen(function* () {
        const client = yield* clientFor(fakeConfig(fake, "custom"))
        const withSub = {
          sub: "s-1",
          id: "i-1",
          email: "d@acme.example",
          email_verified: true,
          name: "D",
          picture: "https://p.example/d"
        }
        const first = yield* signIn(fake, "custom", client, { userinfo: withSub, codeChallenge: s256(VERIFIER) })
        const { sub: _, id: __, ...mapped } = withSub
        expect(first.info).toEqual({ provider: "acme", provider_user_id: "s-1", ...mapped, raw: withSub })
        const second = yield* signIn(fake, "custom", client, {
          userinfo: { id: 991, email: "e@acme.example" },
          codeChallenge: s256(VERIFIER)
        })
        expect([second.info.provider_user_id, second.info.email, second.info.email_verified, second.info.name]).toEqual(
          ["991", "e@acme.example", false, null]
        )
        const third = yield* Effect.flip(
          signIn(fake, "custom", client, { userinfo: { email: "f@acme.example" }, codeChallenge: s256(VERIFIER) })
        )
        expect(third._tag).toBe("OAuthProviderError")
      })
    )
  )

  it.scopedLive("custom from code: its own mapping reads the answer, and what it returns is checked", () =>
    withFake((fake) =>
      Effect.gen(function* () {
        const mapUserInfo = (userinfo: Readonly<Record<string, unknown>>) => {
          if (userinfo.broken === true) throw new Error("the deployment's mapping failed")
          const account = userinfo.account as { readonly uid: number; readonly mail: string }
          return { provider_user_id: account.uid, email: account.mail, email_verified: userinfo.checked === "yes" }
        }
        const client = yield* clientFor(fakeConfig(fake, "custom", { mapUserInfo: Option.some(mapUserInfo) }))
        const answer = { account: { uid: 77, mail: "m@acme.example" }, checked: "yes" }
        const { info } = yield* signIn(fake, "custom", client, { userinfo: answer, codeChallenge: s256(VERIFIER) })
        expect(info).toEqual({
          provider: "acme",
          provider_user_id: "77",
          email: "m@acme.example",
          email_verified: true,
          name: null,
          picture: null,
          raw: answer
        })
        for (const userinfo of [{ broken: true }, { account: { uid: "", mail: "x@acme.example" } }]) {
          const failure = yield* Effect.flip(
            signIn(fake, "custom", client, { userinfo, codeChallenge: s256(VERIFIER) })
          )
          expect(failure._tag).toBe("OAuthProviderError")
        }
      })
    )
  )

  it.scopedLive("with PKCE off no verifier is sent, which the fake would refuse", () =>
    withFake((fake) =>
      Effect.gen(function* () {
        const client = yield* clientFor(fakeConfig(fake, "google"), { pkce: false })
        const { info } = yield* signIn(fake, "google", client, { userinfo: googleUser })
        expect(info.provider_user_id).toBe("1089")
        expect(fake.tokenRequests[0]?.params.code_verifier).toBeUndefined()
      })
    )
  )

  it.scopedLive("a code the provider refuses is an OAuthError: wrong verifier, reused, GitHub's 200 refusal", () =>
    withFake((fake) =>
      Effect.gen(function* () {
        for (const kind of ["google", "github"] as const) {
          const client = yield* clientFor(fakeConfig(fake, kind))
          const grant = {
            clientId: `client-${kind}`,
            redirectUri: REDIRECT,
            userinfo: googleUser,
            codeChallenge: s256(VERIFIER)
          }
          const wrongVerifier = client.exchangeCode({
            code: fake.issueCode(grant),
            redirectUri: REDIRECT,
            codeVerifier: `${VERIFIER}x`
          })
          expect(yield* Effect.flip(wrongVerifier)).toMatchObject({ _tag: "OAuthError" })
          const code = fake.issueCode(grant)
          yield* client.exchangeCode({ code, redirectUri: REDIRECT, codeVerifier: VERIFIER })
          const reused = client.exchangeCode({ code, redirectUri: REDIRECT, codeVerifier: VERIFIER })
          expect(yield* Effect.flip(reused)).toMatchObject({ _tag: "OAuthError" })
          const otherRedirect = client.exchangeCode({
            code: fake.issueCode(grant),
            redirectUri: "http://localhost:5173/cb",
            codeVerifier: VERIFIER
          })
          expect(yield* Effect.flip(otherRedirect)).toMatchObject({ _tag: "OAuthError" })
        }
      })
    )
  )

  it.scopedLive(
    "refused client credentials are the provider's error, not the user's; a foreign redirect URI is never sent",
    () =>
      withFake((fake) =>
        Effect.gen(function* () {
          for (const kind of ["google", "github", "discord"] as const) {
            const client = yield* clientFor(fakeConfig(fake, kind, { clientSecret: Redacted.make("wrong") }))
            const grant = { userinfo: googleUser, codeChallenge: s256(VERIFIER) }
            expect(yield* Effect.flip(signIn(fake, kind, client, grant))).toMatchObject({ _tag: "OAuthProviderError" })
          }
          const requests = fake.paths.length
          const client = yield* clientFor(fakeConfig(fake, "google"))
          const foreign = client.exchangeCode({
            code: "c",
            redirectUri: "https://evil.example/cb",
            codeVerifier: VERIFIER
          })
          expect(yield* Effect.flip(foreign)).toMatchObject({ _tag: "OAuthError" })
          expect(fake.paths.length).toBe(requests)
          const unknownToken = yield* Effect.flip(client.userInfo(Redacted.make("not-a-token")))
          expect(unknownToken._tag).toBe("OAuthProviderError")
        })
      )
  )
})

describe("one bound for an exchange", () => {
  const bound = 1_000
  /** An answer trickling over most of the bound: within it alone, past it after another such. */
  const slowly = { padding: 2_000, over: bound * 0.7 }

  it.scopedLive("reading the user goes on in the time the code exchange started; another exchange starts afresh", () =>
    withFake((fake) =>
      Effect.gen(function* () {
        const client = yield* clientFor(fakeConfig(fake, "google"), { timeout: bound })
        const grant = {
          clientId: "client-google",
          redirectUri: REDIRECT,
          userinfo: googleUser,
          codeChallenge: s256(VERIFIER)
        }
        fake.stretchNext(pathOf(fake, "google", "token"), slowly)
        fake.stretchNext(pathOf(fake, "google", "userinfo"), slowly)
        const exchange = { code: fake.issueCode(grant), redirectUri: REDIRECT, codeVerifier: VERIFIER }
        expect(yield* Effect.flip(client.identify(exchange))).toMatchObject({
          _tag: "OAuthProviderError",
          message: "The OAuth provider google did not answer in time."
        })
        const { info } = yield* client.identify({ ...exchange, code: fake.issueCode(grant) })
        expect(info.provider_user_id).toBe("1089")
      })
    )
  )
})

describe("a provider failing", () => {
  const atStep = (step: "token" | "userinfo", kind: FakeKind, failure: "hang" | "500" | "malformed" | "redirect") =>
    withFake((fake) =>
      Effect.gen(function* () {
        const client = yield* clientFor(fakeConfig(fake, kind))
        const grant = {
          userinfo: kind === "github" ? githubUser : googleUser,
          emails: githubEmails,
          codeChallenge: s256(VERIFIER)
        }
        fake.failNextAt(pathOf(fake, kind, step), failure)
        const code = fake.issueCode({ clientId: `client-${kind}`, redirectUri: REDIRECT, ...grant })
        const started = Date.now()
        const error = yield* Effect.flip(client.identify({ code, redirectUri: REDIRECT, codeVerifier: VERIFIER }))
        expect(fake.paths).not.toContain("/elsewhere")
        expect(error.message).not.toContain(secretOf(kind))
        return { error, elapsed: Date.now() - started }
      })
    )

  for (const step of ["token", "userinfo"] as const) {
    for (const kind of ["google", "github"] as const) {
      it.scopedLive(`${kind} ${step}: a provider that hangs is given up after the timeout`, () =>
        Effect.map(atStep(step, kind, "hang"), ({ error, elapsed }) => {
          expect(error).toMatchObject({
            _tag: "OAuthProviderError",
            message: `The OAuth provider ${kind} did not answer in time.`
          })
          expect(elapsed).toBeGreaterThanOrEqual(250)
          expect(elapsed).toBeLessThan(2_000)
        })
      )

      it.scopedLive.each([
        ["500", "answered with status 500"],
        ["malformed", "answered something that is not valid"],
        ["redirect", "answered with a redirect, which is not followed"]
      ] as const)(`${kind} ${step}: %s is the provider's error`, ([failure, reason]) =>
        Effect.map(atStep(step, kind, failure), ({ error }) => {
          expect(error).toMatchObject({ _tag: "OAuthProviderError", message: `The OAuth provider ${kind} ${reason}.` })
        })
      )
    }
  }
})
