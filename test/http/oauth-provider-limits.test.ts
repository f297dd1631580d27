import { createHash } from "node:crypto"
import { describe, expect, layer } from "@effect/vitest"
import { Effect, Layer } from "effect"
import type { Deployment } from "../../config/Deployment.js"
import { type CustomOAuthProvider, oauthProviders } from "../../config/oauthProviders.js"
import * as OAuthProvidersOauth4webapi from "../../infrastructure/oauth/OAuthProvidersOauth4webapi.js"
import { type FakeOAuthProvider, fakeOAuthProvider, type Stretch } from "../support/FakeOAuthProvider.js"
import { expectProblem, uniqueEmail } from "../support/flows.js"
import { authorize, callback, Fake, REDIRECT } from "../support/oauthFlows.js"
import * as TestApp from "../support/TestApp.js"

/**
 * The outbound side of an OAuth sign-in, driven over HTTP against the fake provider: one bound
 * for the whole exchange, at most 1 MiB of any answer, no redirect followed, and PKCE for custom
 * providers unless their entry turns it off.
 */

/** Custom providers with and without a word on PKCE, from settings and from code. */
const customs = ["acme", "plain", "corp", "loose"] as const
const builtIn = ["google", "github"] as const
type Name = (typeof builtIn)[number] | (typeof customs)[number]
const withoutPkce: ReadonlySet<Name> = new Set(["plain", "loose"])

const clientOf = (name: Name) => ({ id: `${name}-client`, secret: `${name}-secret` })

const env = (fake: FakeOAuthProvider): Record<string, string> => {
  const settings: Record<string, string> = {}
  for (const kind of builtIn) {
    const name = `SERVICE_OAUTH_${kind.toUpperCase()}`
    const at = fake.endpoints(kind)
    Object.assign(settings, {
      [`${name}_CLIENT_ID`]: clientOf(kind).id,
      [`${name}_CLIENT_SECRET`]: clientOf(kind).secret,
      [`${name}_REDIRECT_URIS`]: REDIRECT,
      [`${name}_AUTHORIZATION_ENDPOINT`]: at.authorization,
      [`${name}_TOKEN_ENDPOINT`]: at.token,
      [`${name}_USERINFO_ENDPOINT`]: at.userinfo,
      ...(at.emails === undefined ? {} : { [`${name}_EMAILS_ENDPOINT`]: at.emails })
    })
  }
  const custom = (name: "acme" | "plain") => ({
    name,
    authorization_endpoint: fake.endpoints("custom").authorization,
    token_endpoint: fake.endpoints("custom").token,
    userinfo_endpoint: fake.endpoints("custom").userinfo,
    client_id: clientOf(name).id,
    client_secret: clientOf(name).secret,
    redirect_uris: [REDIRECT]
  })
  // acme says nothing of PKCE; plain turns it off.
  settings.SERVICE_OAUTH_CUSTOM_PROVIDERS = JSON.stringify([custom("acme"), { ...custom("plain"), pkce: false }])
  return settings
}

const codeProviders = (fake: FakeOAuthProvider): ReadonlyArray<CustomOAuthProvider> => {
  const custom = (name: "corp" | "loose") => ({
    name,
    authorization_endpoint: fake.endpoints("custom").authorization,
    token_endpoint: fake.endpoints("custom").token,
    userinfo_endpoint: fake.endpoints("custom").userinfo,
    client_id: clientOf(name).id,
    client_secret: clientOf(name).secret,
    redirect_uris: [REDIRECT]
  })
  // corp says nothing of PKCE; loose turns it off.
  return [custom("corp"), { ...custom("loose"), pkce: false }]
}

/**
 * The service with its providers at one fake. With `bound`, the providers' adapter is built as
 * the composition builds it, but with that bound for an exchange instead of the default.
 */
const app = (bound?: number) =>
  Layer.unwrapScoped(
    Effect.map(fakeOAuthProvider([...builtIn, ...customs].map(clientOf)), (fake) => {
      const deployment: Deployment = { oauthProviders: codeProviders(fake) }
      const settings = TestApp.settingsFor({
        SERVICE_SECRET_KEY: TestApp.testSecretKey,
        SERVICE_DATABASE_URL: "memory:",
        ...env(fake)
      })
      const overrides =
        bound === undefined
          ? undefined
          : OAuthProvidersOauth4webapi.layer({
              providers: oauthProviders(settings, deployment),
              pkce: settings.oauth.oauthPkceEnabled,
              timeout: bound
            })
      return Layer.merge(
        TestApp.layer("memory:", env(fake), overrides === undefined ? { deployment } : { deployment, overrides }),
        Layer.succeed(Fake, fake)
      )
    })
  )

/** What the provider's user endpoints answer for a new person, in each kind's words. */
const answers = (name: Name) => {
  const email = uniqueEmail(name)
  const id = createHash("sha256").update(email).digest("hex").slice(0, 12)
  switch (name) {
    case "google":
      return { userinfo: { sub: id, email, email_verified: true, name: "Ada" } }
    case "github":
      return {
        userinfo: { id: Number.parseInt(id.slice(0, 8), 16), login: "ada", name: "Ada", avatar_url: null },
        emails: [{ email, primary: true, verified: true }]
      }
    default:
      return { userinfo: { sub: id, email, email_verified: true, name: "Ada" } }
  }
}

/** A whole sign-in through `name`: the authorization URL's parameters, the callback's reply and how long it took. */
const signIn = (name: Name) =>
  Effect.gen(function* () {
    const fake = yield* Fake
    const started = yield* authorize(name)
    expect(started.status).toBe(200)
    const { authorization_url, binding } = started.body as { authorization_url: string; binding: string }
    const params = new URL(authorization_url).searchParams
    const challenge = params.get("code_challenge")
    const code = fake.issueCode({
      clientId: params.get("client_id") ?? "",
      redirectUri: params.get("redirect_uri") ?? "",
      ...answers(name),
      ...(challenge === null ? {} : { codeChallenge: challenge })
    })
    const requests = fake.tokenRequests.length
    const clock = Date.now()
    const reply = yield* callback(name, { code, state: params.get("state"), binding })
    return { params, reply, elapsed: Date.now() - clock, tokenRequest: fake.tokenRequests[requests] }
  })

/** The path of one of the fake's endpoints for `kind`. */
const pathOf = (fake: FakeOAuthProvider, kind: "google" | "github", endpoint: "token" | "userinfo" | "emails") =>
  new URL(fake.endpoints(kind)[endpoint] ?? "").pathname

const expectProviderFailure = (reply: TestApp.Reply, provider: string, reason: string) => {
  const problem = expectProblem(reply, 502, "OAuthProviderError")
  expect(problem.detail).toBe(`The OAuth provider ${provider} ${reason}.`)
}

const MiB = 1024 * 1024

describe("OAuth provider calls, at the default bound", () => {
  layer(app(), { excludeTestServices: true })((it) => {
    it.effect.each([
      ["google", "token"],
      ["google", "userinfo"],
      ["github", "emails"]
    ] as const)(
      "%s %s answering more than 1 MiB: 502 at once, and the rest of the answer is never read",
      ([kind, endpoint]) =>
        Effect.gen(function* () {
          const fake = yield* Fake
          const path = pathOf(fake, kind, endpoint)
          fake.stretchNext(path, { padding: 64 * MiB, over: 0 })
          const { reply, elapsed } = yield* signIn(kind)
          expectProviderFailure(reply, kind, "answered more than 1 MiB")
          expect(elapsed).toBeLessThan(2_000)
          // The client hung up after the limit: the fake wrote little more than the sockets hold.
          const answer = fake.stretched.at(-1)
          expect(answer?.path).toBe(path)
          yield* Effect.promise(() => new Promise((resolve) => setTimeout(resolve, 50)))
          expect(answer?.hungUp).toBe(true)
          expect(answer?.written).toBeLessThan(16 * MiB)
        })
    )

    it.effect("an answer within 1 MiB, however padded, is read whole", () =>
      Effect.gen(function* () {
        const fake = yield* Fake
        fake.stretchNext(pathOf(fake, "google", "userinfo"), { padding: MiB - 4 * 1024, over: 0 })
        const { reply } = yield* signIn("google")
        expect(reply.status, reply.text).toBe(200)
        expect(fake.stretched.at(-1)?.hungUp).toBe(false)
      })
    )

    it.effect.each(["token", "userinfo"] as const)(
      "a redirect from the %s endpoint is not followed, even to the very answer: 502",
      (endpoint) =>
        Effect.gen(function* () {
          const fake = yield* Fake
          const path = pathOf(fake, "google", endpoint)
          fake.redirectNext(path, 307)
          const before = fake.paths.length
          const { reply } = yield* signIn("google")
          expectProviderFailure(reply, "google", "answered with a redirect, which is not followed")
          expect(fake.paths.slice(before).filter((seen) => seen.split("?")[0] === path)).toHaveLength(1)
        })
    )

    it.effect.each(customs)(
      "custom provider %s: PKCE (S256) unless its entry says pkce: false, from settings and from code",
      (name) =>
        Effect.gen(function* () {
          const { params, reply, tokenRequest } = yield* signIn(name)
          expect(reply.status, reply.text).toBe(200)
          const verifier = tokenRequest?.params.code_verifier
          if (withoutPkce.has(name)) {
            expect([params.get("code_challenge"), params.get("code_challenge_method"), verifier]).toEqual([
              null,
              null,
              undefined
            ])
          } else {
            expect(params.get("code_challenge_method")).toBe("S256")
            expect(verifier).toEqual(expect.any(String))
            expect(params.get("code_challenge")).toBe(
              createHash("sha256")
                .update(verifier ?? "")
                .digest("base64url")
            )
          }
        })
    )
  })
})

describe("OAuth provider calls, one bound for the whole exchange", () => {
  const bound = 1_500
  const slowly = (over: number): Stretch => ({ padding: 2_000, over })

  layer(app(bound), { excludeTestServices: true })((it) => {
    it.effect("GitHub's three calls answering slowly, each within the bound, the three past it: 502 at the bound", () =>
      Effect.gen(function* () {
        const fake = yield* Fake
        for (const endpoint of ["token", "userinfo", "emails"] as const) {
          fake.stretchNext(pathOf(fake, "github", endpoint), slowly(bound * 0.45))
        }
        const { reply, elapsed } = yield* signIn("github")
        expectProviderFailure(reply, "github", "did not answer in time")
        expect(elapsed).toBeGreaterThanOrEqual(bound - 100)
        expect(elapsed).toBeLessThan(bound + 1_000)
      })
    )

    it.effect("the same calls, slow but together within the bound, sign in", () =>
      Effect.gen(function* () {
        const fake = yield* Fake
        for (const endpoint of ["token", "userinfo", "emails"] as const) {
          fake.stretchNext(pathOf(fake, "github", endpoint), slowly(bound * 0.15))
        }
        const { reply } = yield* signIn("github")
        expect(reply.status, reply.text).toBe(200)
        expect(fake.stretched.slice(-3).map((answer) => answer.hungUp)).toEqual([false, false, false])
      })
    )
  })
})
