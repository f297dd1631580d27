import { describe, expect, layer } from "@effect/vitest"
import { Effect, Layer } from "effect"
import fc from "fast-check"
import { missingFeatures } from "../../composition/startup.js"
import { fakeOAuthProvider } from "../support/FakeOAuthProvider.js"
import { fuzzRequest } from "../support/fuzz.js"
import { fuzzDriver, report } from "../support/fuzzDriver.js"
import * as TestApp from "../support/TestApp.js"

/**
 * Whatever a client sends, nothing reaches it as a 5xx: every route the service's own OpenAPI
 * document lists, the health routes, unknown paths and protocol garbage, on every backend, with
 * rate limits and lockout off and on. Every answer keeps the rules in support/fuzz.ts.
 *
 * FUZZ_SEED replays a run (its value is printed with any failure); FUZZ_RUNS sets how many
 * requests the whole suite sends (10,000 by default), shared evenly by the servers.
 */

const CONCURRENCY = 4

const baseSeed =
  process.env.FUZZ_SEED === undefined ? Math.floor(Math.random() * 0x7fffffff) : Number(process.env.FUZZ_SEED)
const totalRequests = Number(process.env.FUZZ_RUNS ?? 10_000)

const corsOrigin = "https://app.example.com"

/** Limits and lockout off, bearer tokens; and on, behind a trusted proxy, with cookies, CORS and a global limit. */
const configurations = [
  {
    name: "limits off",
    env: {
      SERVICE_AUTH_RATE_LIMIT_ENABLED: "false",
      SERVICE_LOCKOUT_ENABLED: "false",
      SERVICE_PREVENT_REGISTRATION_ENUMERATION: "false"
    }
  },
  {
    name: "limits on",
    env: {
      SERVICE_AUTH_RATE_LIMIT_ENABLED: "true",
      SERVICE_LOCKOUT_ENABLED: "true",
      SERVICE_GLOBAL_RATE_LIMIT: "300/minute",
      SERVICE_TRUSTED_PROXY_HEADERS: "x-forwarded-for,forwarded",
      SERVICE_TOKEN_TRANSPORT: "cookie",
      SERVICE_COOKIE_SECURE: "false",
      SERVICE_CORS_ORIGINS: corsOrigin
    }
  }
] as const

const servers = TestApp.backends.flatMap((backend) =>
  configurations.map((configuration) => ({ backend, configuration }))
)
const requestsPerServer = Math.ceil(totalRequests / servers.length)

/**
 * The route groups that need settings to be served (passkeys, OAuth against a fake provider),
 * turned on when this build supports them, so that their routes are fuzzed from the day they
 * exist.
 */
const optionalGroups = (providerUrl: string): Record<string, string> => {
  const groups: ReadonlyArray<Record<string, string>> = [
    {
      SERVICE_PASSKEY_ENABLED: "true",
      SERVICE_PASSKEY_RP_ID: "localhost",
      SERVICE_PASSKEY_RP_NAME: "Fuzz",
      SERVICE_PASSKEY_ORIGINS: "http://localhost:8000"
    },
    {
      SERVICE_OAUTH_CUSTOM_PROVIDERS: JSON.stringify([
        {
          name: "fuzz",
          authorization_endpoint: `${providerUrl}/custom/authorize`,
          token_endpoint: `${providerUrl}/custom/token`,
          userinfo_endpoint: `${providerUrl}/custom/me`,
          client_id: "fuzz",
          client_secret: "fuzz-secret",
          redirect_uris: ["http://localhost:8000/callback"]
        }
      ])
    }
  ]
  const supported = (group: Record<string, string>) =>
    missingFeatures(TestApp.settingsFor({ SERVICE_SECRET_KEY: TestApp.testSecretKey, ...group })).length === 0
  return Object.assign({}, ...groups.filter(supported))
}

for (const [index, { backend, configuration }] of servers.entries()) {
  describe(`fuzzing every route (${backend.name}, ${configuration.name})`, () => {
    const service = Layer.unwrapScoped(
      Effect.map(fakeOAuthProvider([{ id: "fuzz", secret: "fuzz-secret" }]), (provider) =>
        TestApp.layer(backend, { ...configuration.env, ...optionalGroups(provider.url) })
      )
    )
    layer(service, { excludeTestServices: true })((it) => {
      it.scoped(
        `${requestsPerServer} generated requests: no 5xx, every error a problem, no echo, 415 for non-JSON bodies`,
        () =>
          Effect.gen(function* () {
            const { context, run } = yield* fuzzDriver(CONCURRENCY)
            yield* Effect.promise(() =>
              fc.assert(
                fc.asyncProperty(
                  fc.array(fuzzRequest(context), { minLength: CONCURRENCY, maxLength: CONCURRENCY }),
                  async (batch) => {
                    const failures = await run(batch)
                    if (failures.length > 0) throw new Error(`${report(failures)}\n\nReplay with FUZZ_SEED=${baseSeed}`)
                  }
                ),
                // No shrinking: it would replay requests against a server whose state (sessions, rate
                // limits, lockout) has moved on, and a hang costs the full timeout each time; the
                // failing request is reported in full instead.
                {
                  seed: (baseSeed + index) | 0,
                  numRuns: Math.ceil(requestsPerServer / CONCURRENCY),
                  endOnFailure: true
                }
              )
            )
            const app = yield* TestApp.TestApp
            expect((yield* app.request("GET", "/healthz")).status).toBe(200)
          }),
        180_000
      )
    })
  })
}
