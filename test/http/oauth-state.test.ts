import { createHash } from "node:crypto"
import { describe, expect, layer } from "@effect/vitest"
import { Effect } from "effect"
import { TokenSigner } from "../../application/ports/TokenSigner.js"
import { startupWarnings } from "../../composition/startup.js"
import type { TokenClaims } from "../../domain/Token.js"
import { setCookies } from "../support/cookies.js"
import { expectProblem, me, signUp } from "../support/flows.js"
import {
  approve,
  appWithProviders,
  authorize,
  begin,
  callback,
  Fake,
  person,
  REDIRECT,
  signInThrough,
  through
} from "../support/oauthFlows.js"
import * as TestApp from "../support/TestApp.js"

const claimsOf = (jwt: string) =>
  JSON.parse(Buffer.from(jwt.split(".")[1] ?? "", "base64url").toString("utf8")) as TokenClaims

describe("OAuth state, binding and redirect rules", () => {
  layer(appWithProviders("memory:"), { excludeTestServices: true })((it) => {
    it.effect("the callback wants code, state and binding, strings all, and nothing else", () =>
      Effect.gen(function* () {
        const started = yield* begin("google")
        const code = yield* approve(started, person())
        const whole = { code, state: started.state, binding: started.binding }
        for (const body of [
          { code, state: started.state },
          { state: started.state, binding: started.binding },
          { code, binding: started.binding },
          { ...whole, binding: 42 },
          { ...whole, extra: true }
        ]) {
          expectProblem(yield* callback("google", body), 422, "ValidationError")
        }
        // None of those spent the state.
        expect((yield* callback("google", whole)).status).toBe(200)
      })
    )

    it.effect("a wrong binding is 400 and does not spend the state: its holder still signs in with it", () =>
      Effect.gen(function* () {
        const started = yield* begin("github")
        const code = yield* approve(started, person())
        const wrong = expectProblem(
          yield* callback("github", { code, state: started.state, binding: `${started.binding}x` }),
          400,
          "OAuthError"
        )
        expect(wrong.detail).toBe("The binding does not match the OAuth state.")
        expect((yield* callback("github", { code, state: started.state, binding: started.binding })).status).toBe(200)
      })
    )

    it.effect("a state is burned at its callback: replayed with its binding and a fresh code, it is 400", () =>
      Effect.gen(function* () {
        const who = person()
        const started = yield* begin("discord")
        const first = yield* approve(started, who)
        expect(
          (yield* callback("discord", { code: first, state: started.state, binding: started.binding })).status
        ).toBe(200)
        const again = yield* approve(started, who)
        const replay = expectProblem(
          yield* callback("discord", { code: again, state: started.state, binding: started.binding }),
          400,
          "OAuthError"
        )
        expect(replay.detail).toBe("The OAuth state was used already; start again.")
      })
    )

    it.effect("an expired state, or one whose signature does not hold, is 400", () =>
      Effect.gen(function* () {
        const started = yield* begin("gitlab")
        const code = yield* approve(started, person())
        const signer = yield* TokenSigner
        const claims = claimsOf(started.state)
        const expired = yield* signer.sign({ ...claims, iat: claims.iat - 7200, exp: claims.iat - 3600 })
        const [header, payload, signature] = started.state.split(".")
        const tampered = [header, payload, `${signature?.slice(0, -2)}AA`].join(".")
        const otherProvider = yield* signer.sign({ ...claims, provider: "google", jti: "other" })
        for (const state of [expired, tampered, "not-a-jwt", otherProvider]) {
          const refused = expectProblem(
            yield* callback("gitlab", { code, state, binding: started.binding }),
            400,
            "OAuthError"
          )
          expect(refused.detail).toBe("The OAuth state is invalid or has expired; start again.")
        }
      })
    )

    it.effect("a state lives OAUTH_STATE_EXPIRE_SECONDS exactly: a second past it is refused, leeway or not", () =>
      Effect.gen(function* () {
        const app = yield* TestApp.TestApp
        const lifetime = app.settings.oauth.oauthStateExpireSeconds
        expect(app.settings.tokens.jwtLeewaySeconds).toBeGreaterThan(2)
        const signer = yield* TokenSigner
        /** The flow's own state, as if issued `age` seconds ago (whole seconds, as tokens count them). */
        const issuedAgo = (state: string, age: number) => {
          const claims = claimsOf(state)
          const iat = Math.floor(Date.now() / 1000) - age
          return signer.sign({ ...claims, jti: `${claims.jti}-${age}`, iat, exp: iat + lifetime })
        }
        // One to two seconds past its end, well within JWT_LEEWAY_SECONDS.
        const late = yield* begin("google")
        const lateState = yield* issuedAgo(late.state, lifetime + 1)
        const refused = expectProblem(
          yield* callback("google", { code: yield* approve(late, person()), state: lateState, binding: late.binding }),
          400,
          "OAuthError"
        )
        expect(refused.detail).toBe("The OAuth state is invalid or has expired; start again.")
        // One to two seconds before its end.
        const inTime = yield* begin("google")
        const inTimeState = yield* issuedAgo(inTime.state, lifetime - 2)
        const code = yield* approve(inTime, person())
        expect((yield* callback("google", { code, state: inTimeState, binding: inTime.binding })).status).toBe(200)
      })
    )

    it.effect("the state carries the SHA-256 of the binding and a nonce, never the binding or the PKCE verifier", () =>
      Effect.gen(function* () {
        const started = yield* begin("google")
        const claims = claimsOf(started.state) as TokenClaims & Record<string, unknown>
        expect(claims.type).toBe("oauth_state")
        expect(claims.binding_digest).toBe(createHash("sha256").update(started.binding).digest("hex"))
        expect(claims.nonce).toEqual(expect.any(String))
        expect(started.state).not.toContain(started.binding)
        expect(started.authorizationUrl.searchParams.get("code_challenge_method")).toBe("S256")
        expect(started.authorizationUrl.searchParams.has("code_verifier")).toBe(false)
        const fake = yield* Fake
        const before = fake.tokenRequests.length
        const code = yield* approve(started, person())
        expect((yield* callback("google", { code, state: started.state, binding: started.binding })).status).toBe(200)
        const verifier = fake.tokenRequests[before]?.params.code_verifier ?? ""
        expect(createHash("sha256").update(verifier).digest("base64url")).toBe(
          started.authorizationUrl.searchParams.get("code_challenge")
        )
        expect(JSON.stringify(claims)).not.toContain(verifier)
      })
    )

    it.effect("PKCE: a code granted for another challenge is refused by the provider, and so the callback is 400", () =>
      Effect.gen(function* () {
        const started = yield* begin("google")
        const stolen = yield* approve(started, person(), {
          codeChallenge: createHash("sha256").update("the attacker's verifier").digest("base64url")
        })
        expectProblem(
          yield* callback("google", { code: stolen, state: started.state, binding: started.binding }),
          400,
          "OAuthError"
        )
      })
    )

    it.effect("a code the provider does not know is 400", () =>
      Effect.gen(function* () {
        const started = yield* begin("acme")
        expectProblem(
          yield* callback("acme", { code: "made-up", state: started.state, binding: started.binding }),
          400,
          "OAuthError"
        )
      })
    )

    it.effect("redirect_uri must be on the provider's allow-list as written; without one authorize is refused", () =>
      Effect.gen(function* () {
        for (const redirect of [
          "https://evil.example/oauth/callback",
          `${REDIRECT}/x`,
          `${REDIRECT}?next=https://evil.example`,
          "https://app.example/oauth/x/../callback",
          "HTTPS://APP.EXAMPLE/oauth/callback"
        ]) {
          const refused = expectProblem(yield* authorize("google", { redirect }), 400, "OAuthError")
          expect(refused.detail).toContain("The redirect_uri is not allowed for this provider")
          // What was compared: the value as the service read it, and the setting it was compared with.
          expect(refused.detail).toContain(JSON.stringify(redirect))
          expect(refused.detail).toContain("SERVICE_OAUTH_GOOGLE_REDIRECT_URIS")
          // The allowed ones stay with the operator (the log).
          expect(refused.detail).not.toContain(JSON.stringify(REDIRECT))
        }
        const app = yield* TestApp.TestApp
        // Written unencoded in the query, as a hand-made URL has it: the `//` reaches the rule as sent.
        const unencoded = yield* app.request(
          "GET",
          `${app.settings.server.authPrefix}/oauth/google/authorize?redirect_uri=${REDIRECT}`
        )
        expect(unencoded.status, unencoded.text).toBe(200)
        for (const path of ["/oauth/google/authorize", "/oauth/google/authorize?redirect_uri="]) {
          const missing = yield* app.request("GET", `${app.settings.server.authPrefix}${path}`)
          expect(missing.status, path).toBe(path.endsWith("=") ? 400 : 422)
        }
      })
    )

    it.effect("a provider that is not configured is 404 on every route naming it", () =>
      Effect.gen(function* () {
        const session = yield* signUp("nf")
        expectProblem(yield* authorize("facebook"), 404, "NotFoundError")
        expectProblem(yield* authorize("facebook", { token: session.access }), 404, "NotFoundError")
        const body = { code: "c", state: "s", binding: "b" }
        expectProblem(yield* callback("facebook", body), 404, "NotFoundError")
        expectProblem(yield* callback("facebook", body, session.access), 404, "NotFoundError")
      })
    )

    it.effect("sign-in and link states are not interchangeable, and a link state is good only for its issuer", () =>
      Effect.gen(function* () {
        const alice = yield* signUp("alice")
        const mallory = yield* signUp("mallory")
        const who = person()

        const signInState = yield* begin("github")
        const code1 = yield* approve(signInState, who)
        expectProblem(
          yield* callback(
            "github",
            { code: code1, state: signInState.state, binding: signInState.binding },
            alice.access
          ),
          400,
          "OAuthError"
        )

        const linkState = yield* begin("github", alice.access)
        expect(claimsOf(linkState.state).sub).not.toBe(alice.userId)
        const code2 = yield* approve(linkState, who)
        expectProblem(
          yield* callback("github", { code: code2, state: linkState.state, binding: linkState.binding }),
          400,
          "OAuthError"
        )
        const foreign = expectProblem(
          yield* callback(
            "github",
            { code: code2, state: linkState.state, binding: linkState.binding },
            mallory.access
          ),
          400,
          "OAuthError"
        )
        expect(foreign.detail).toBe("The OAuth state was not issued to the signed-in user.")
        // None of the refusals spent it: its issuer links with it.
        const linked = yield* callback(
          "github",
          { code: code2, state: linkState.state, binding: linkState.binding },
          alice.access
        )
        expect(linked.status).toBe(200)
      })
    )

    it.effect(
      "a provider that fails answers 502; one that hangs answers 502 within the call's timeout",
      () =>
        Effect.gen(function* () {
          const fake = yield* Fake
          const session = yield* signUp("hang")
          fake.failNext("500")
          expectProblem(yield* through("google", person()), 502, "OAuthProviderError")
          fake.failNext("malformed")
          expectProblem(yield* through("discord", person()), 502, "OAuthProviderError")
          const started = Date.now()
          fake.failNext("hang")
          expectProblem(yield* through("gitlab", person()), 502, "OAuthProviderError")
          expect(Date.now() - started).toBeLessThan(14_000)
          // The service went on serving meanwhile, and after.
          expect((yield* me(session.access)).status).toBe(200)
          yield* signInThrough("gitlab", person())
        }),
      { timeout: 30_000 }
    )
  })
})

describe("OAuth with BLACKLIST_ENABLED=false", () => {
  layer(appWithProviders("memory:", { SERVICE_BLACKLIST_ENABLED: "false" }), { excludeTestServices: true })((it) => {
    it.effect("a state is not burned: whoever holds it and its binding can replay it within its lifetime", () =>
      Effect.gen(function* () {
        const who = person("replay")
        const started = yield* begin("google")
        for (let use = 0; use < 2; use++) {
          const code = yield* approve(started, who)
          expect((yield* callback("google", { code, state: started.state, binding: started.binding })).status).toBe(200)
        }
      })
    )

    it.effect("start-up warns about it, and only when a provider is configured", () =>
      Effect.gen(function* () {
        const app = yield* TestApp.TestApp
        const warnings = startupWarnings(app.settings, {})
        expect(warnings.some((line) => line.includes("OAuth states are not burned"))).toBe(true)
        const without = TestApp.settingsFor({
          SERVICE_SECRET_KEY: TestApp.testSecretKey,
          SERVICE_BLACKLIST_ENABLED: "false"
        })
        expect(startupWarnings(without, {}).some((line) => line.includes("OAuth"))).toBe(false)
      })
    )
  })
})

describe("OAuth in cookie mode", () => {
  layer(appWithProviders("memory:", { SERVICE_TOKEN_TRANSPORT: "cookie", SERVICE_COOKIE_SECURE: "false" }), {
    excludeTestServices: true
  })((it) => {
    it.effect(
      "the sign-in callback sets the refresh and CSRF cookies, as login does, and answers refresh_token null",
      () =>
        Effect.gen(function* () {
          const reply = yield* through("google", person("cookie"))
          expect(reply.status).toBe(200)
          const cookies = setCookies(reply)
          expect(cookies.get("portcullis_refresh")?.value).toEqual(expect.any(String))
          expect(cookies.get("portcullis_csrf")?.value).toEqual(expect.any(String))
          expect(reply.body).toMatchObject({ refresh_token: null })
          expect((yield* me((reply.body as { access_token: string }).access_token)).status).toBe(200)
        })
    )
  })
})

describe("OAuth callback rate limit", () => {
  layer(
    appWithProviders("memory:", {
      SERVICE_AUTH_RATE_LIMIT_ENABLED: "true",
      SERVICE_AUTH_RATE_LIMITS: '{"oauth_callback":"3/minute"}'
    }),
    { excludeTestServices: true }
  )((it) => {
    it.effect("oauth_callback counts sign-in and link callbacks of every provider together: the fourth is 429", () =>
      Effect.gen(function* () {
        const session = yield* signUp("limited")
        const body = { code: "c", state: "s", binding: "b" }
        expectProblem(yield* callback("google", body), 400, "OAuthError")
        expectProblem(yield* callback("github", body, session.access), 400, "OAuthError")
        expectProblem(yield* callback("acme", body), 400, "OAuthError")
        const limited = yield* callback("discord", body)
        expectProblem(limited, 429, "RateLimitedError")
        expect(Number(limited.headers.get("retry-after"))).toBeGreaterThan(0)
        // authorize counts in a bucket of its own (oauth_authorize), not in this one.
        expect((yield* authorize("google")).status).toBe(200)
      })
    )
  })
})
