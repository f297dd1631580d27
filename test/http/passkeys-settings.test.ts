import { describe, expect, layer } from "@effect/vitest"
import { Clock, Duration, Effect, Layer } from "effect"
import { ChallengeStore } from "../../application/ports/ChallengeStore.js"
import * as ChallengeStoreMemory from "../../infrastructure/memory/ChallengeStoreMemory.js"
import * as ChallengeStoreRedis from "../../infrastructure/redis/ChallengeStoreRedis.js"
import { setCookies } from "../support/cookies.js"
import { call, expectProblem, signUp } from "../support/flows.js"
import { makeOutbox } from "../support/Outbox.js"
import {
  addPasskey,
  authenticateBegin,
  authenticateComplete,
  passkeyEnv,
  passkeySignIn,
  registerBegin,
  registerComplete,
  signInOptions
} from "../support/passkeys.js"
import * as Redis from "../support/redis.js"
import { type CreationOptionsLike, SoftwareAuthenticator } from "../support/SoftwareAuthenticator.js"
import * as TestApp from "../support/TestApp.js"

/**
 * The passkey settings at work: the challenge lifetime, user verification turned off, the
 * passkey_auth rate limit, cookie mode, the Redis challenge backend, and the group left out
 * when PASSKEY_ENABLED is false.
 */

/** How far the challenge store's clock runs ahead of the wall clock, so a test can let a lifetime pass. */
let ahead = 0
const now = () => Date.now() + ahead
const skewedClock: Clock.Clock = {
  [Clock.ClockTypeId]: Clock.ClockTypeId,
  unsafeCurrentTimeMillis: now,
  unsafeCurrentTimeNanos: () => BigInt(now()) * 1_000_000n,
  currentTimeMillis: Effect.sync(now),
  currentTimeNanos: Effect.sync(() => BigInt(now()) * 1_000_000n),
  sleep: (duration) => Effect.sleep(duration)
}

/** The memory challenge store on the skewed clock. */
const skewedChallenges = Layer.scoped(
  ChallengeStore,
  Effect.map(ChallengeStoreMemory.make, (store) =>
    ChallengeStore.of({
      put: (key, challenge, ttl) => Effect.withClock(store.put(key, challenge, ttl), skewedClock),
      take: (key) => Effect.withClock(store.take(key), skewedClock)
    })
  )
)

describe("passkey challenges expire after PASSKEY_CHALLENGE_TTL", () => {
  layer(
    TestApp.layer("memory:", { ...passkeyEnv, SERVICE_PASSKEY_CHALLENGE_TTL: "30" }, { overrides: skewedChallenges }),
    { excludeTestServices: true }
  )((it) => {
    it.effect("a challenge completes until its lifetime is over, and never after", () =>
      Effect.gen(function* () {
        const session = yield* signUp("pk-ttl")
        const authenticator = new SoftwareAuthenticator()
        ahead = 0
        yield* addPasskey(session, authenticator)

        const early = yield* signInOptions(session.email)
        ahead = Duration.toMillis(Duration.seconds(29))
        const inTime = yield* authenticateComplete({
          challenge_key: early.challenge_key,
          credential: authenticator.authenticate(early)
        })
        expect(inTime.status).toBe(200)

        ahead = 0
        const late = yield* signInOptions(session.email)
        ahead = Duration.toMillis(Duration.seconds(31))
        const expired = yield* authenticateComplete({
          challenge_key: late.challenge_key,
          credential: authenticator.authenticate(late)
        })
        expectProblem(expired, 401, "AuthenticationError")

        ahead = 0
        const begun = (yield* registerBegin(session)).body as CreationOptionsLike & { challenge_key: string }
        ahead = Duration.toMillis(Duration.seconds(31))
        const credential = new SoftwareAuthenticator().register(begun)
        const complete = yield* registerComplete(session, {
          challenge_key: begun.challenge_key,
          credential,
          device_name: "late"
        })
        expectProblem(complete, 400, "PasskeyRegistrationError")
        ahead = 0
      })
    )

    it.effect("the browser is given the challenge's lifetime to answer", () =>
      Effect.gen(function* () {
        const options = (yield* authenticateBegin()).body as { timeout: number }
        expect(options.timeout).toBe(30_000)
      })
    )
  })
})

describe("PASSKEY_REQUIRE_USER_VERIFICATION=false", () => {
  layer(TestApp.layer("memory:", { ...passkeyEnv, SERVICE_PASSKEY_REQUIRE_USER_VERIFICATION: "false" }), {
    excludeTestServices: true
  })((it) => {
    it.effect("a passkey without user verification registers and signs in; presence is still required", () =>
      Effect.gen(function* () {
        const session = yield* signUp("pk-no-uv")
        const authenticator = new SoftwareAuthenticator({ flags: { uv: false } })
        yield* addPasskey(session, authenticator)
        const options = yield* signInOptions(session.email)
        expect(options).toMatchObject({ userVerification: "preferred" })
        expect((yield* passkeySignIn(authenticator, { email: session.email })).status).toBe(200)
        expectProblem(
          yield* passkeySignIn(authenticator, { overrides: { flags: { up: false } } }),
          401,
          "AuthenticationError"
        )
      })
    )
  })
})

describe("user verification is required by default", () => {
  layer(TestApp.layer("memory:", passkeyEnv), { excludeTestServices: true })((it) => {
    it.effect("the options ask for it", () =>
      Effect.gen(function* () {
        const options = yield* signInOptions()
        expect(options).toMatchObject({ userVerification: "required" })
      })
    )
  })
})

describe("the passkey_auth rate limit", () => {
  const env = {
    ...passkeyEnv,
    SERVICE_AUTH_RATE_LIMIT_ENABLED: "true",
    SERVICE_TRUSTED_PROXY_HEADERS: "x-forwarded-for"
  }
  layer(TestApp.layer("memory:", env), { excludeTestServices: true })((it) => {
    it.effect("begin and complete share 10 requests per minute per client; the 11th answers 429", () =>
      Effect.gen(function* () {
        const from = { "x-forwarded-for": "198.51.100.77" }
        for (let i = 0; i < 5; i++) {
          expect((yield* authenticateBegin(undefined, from)).status).toBe(200)
          const reply = yield* authenticateComplete({ challenge_key: "x", credential: {} }, from)
          expect(reply.status).toBe(422)
        }
        for (const reply of [
          yield* authenticateBegin(undefined, from),
          yield* authenticateComplete({ challenge_key: "x", credential: {} }, from)
        ]) {
          const body = expectProblem(reply, 429, "RateLimitedError")
          expect(body.status).toBe(429)
          expect(reply.headers.get("retry-after")).toMatch(/^\d+$/)
          expect(reply.headers.get("ratelimit-limit")).toBe("10")
        }
        // Another client is not limited.
        expect((yield* authenticateBegin(undefined, { "x-forwarded-for": "198.51.100.78" })).status).toBe(200)
      })
    )
  })
})

describe("passkey sign-in in cookie mode", () => {
  const env = { ...passkeyEnv, SERVICE_TOKEN_TRANSPORT: "cookie", SERVICE_COOKIE_SECURE: "false" }
  layer(TestApp.layer("memory:", env), { excludeTestServices: true })((it) => {
    it.effect("the refresh token travels in the HttpOnly cookie, as with a password login", () =>
      Effect.gen(function* () {
        const session = yield* signUp("pk-cookie")
        const authenticator = new SoftwareAuthenticator()
        yield* addPasskey(session, authenticator)
        const reply = yield* passkeySignIn(authenticator)
        expect(reply.status).toBe(200)
        expect((reply.body as { refresh_token: unknown }).refresh_token).toBeNull()
        const cookies = setCookies(reply)
        expect(cookies.get("portcullis_refresh")?.attributes.get("httponly")).toBe(true)
        expect(cookies.get("portcullis_csrf")?.value).toEqual(expect.any(String))
      })
    )
  })
})

describe.skipIf(Redis.testRedisUrl === undefined)(
  "passkey challenges in Redis (PASSKEY_CHALLENGE_BACKEND=redis)",
  () => {
    const challenges = ChallengeStoreRedis.layer.pipe(Layer.provide(Redis.clientLayer()))
    layer(TestApp.layer("memory:", passkeyEnv, { overrides: challenges }), { excludeTestServices: true })((it) => {
      it.effect("registration and sign-in complete through the shared store, each challenge once", () =>
        Effect.gen(function* () {
          const session = yield* signUp("pk-redis")
          const authenticator = new SoftwareAuthenticator()
          yield* addPasskey(session, authenticator)
          const options = yield* signInOptions(session.email)
          const credential = authenticator.authenticate(options)
          expect((yield* authenticateComplete({ challenge_key: options.challenge_key, credential })).status).toBe(200)
          const again = authenticator.authenticate(options)
          expectProblem(
            yield* authenticateComplete({ challenge_key: options.challenge_key, credential: again }),
            401,
            "AuthenticationError"
          )
        })
      )
    })
  }
)

describe("a passkey sign-in as the deployment and the sessions see it", () => {
  const outbox = makeOutbox()
  layer(TestApp.layer("memory:", passkeyEnv, { deployment: { events: outbox.handlers } }), {
    excludeTestServices: true
  })((it) => {
    it.effect("fires after_login with the user, and its session records the client's address and agent", () =>
      Effect.gen(function* () {
        const session = yield* signUp("pk-events")
        yield* outbox.next("after_login", session.email)
        const authenticator = new SoftwareAuthenticator()
        yield* addPasskey(session, authenticator)
        const options = yield* signInOptions(session.email)
        const reply = yield* authenticateComplete(
          { challenge_key: options.challenge_key, credential: authenticator.authenticate(options) },
          { "user-agent": "PasskeyTest/1.0" }
        )
        expect(reply.status).toBe(200)
        const [user] = yield* outbox.next("after_login", session.email, 2)
        expect(user).toMatchObject({ email: session.email })
        expect(user).not.toHaveProperty("hashed_password")
        const token = (reply.body as { access_token: string }).access_token
        const sessions = (yield* call("GET", "/sessions", { token })).body as Array<Record<string, unknown>>
        expect(sessions.find((listed) => listed.current)).toMatchObject({
          ip_address: "127.0.0.1",
          user_agent: "PasskeyTest/1.0"
        })
      })
    )
  })
})

describe("PASSKEY_ENABLED=false (the default)", () => {
  layer(TestApp.layer("memory:"), { excludeTestServices: true })((it) => {
    it.effect("serves no passkey route", () =>
      Effect.gen(function* () {
        const app = yield* TestApp.TestApp
        const prefix = app.settings.server.authPrefix
        expect((yield* app.request("POST", `${prefix}/passkeys/authenticate/begin`)).status).toBe(404)
        expect((yield* app.request("GET", `${prefix}/passkeys`)).status).toBe(404)
      })
    )
  })
})
