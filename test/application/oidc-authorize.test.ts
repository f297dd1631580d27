import { createHash } from "node:crypto"
import { describe, expect, it } from "@effect/vitest"
import { DateTime, Effect, Layer, Option, TestClock } from "effect"
import { Audit } from "../../application/Audit.js"
import { Authorize, type AuthorizeOutcome } from "../../application/oidc/Authorize.js"
import { OidcPolicy } from "../../application/oidc/OidcPolicy.js"
import { AuthorizationCodes } from "../../application/ports/AuthorizationCodes.js"
import { Consents } from "../../application/ports/Consents.js"
import { OidcClients } from "../../application/ports/OidcClients.js"
import type { UserRepo } from "../../application/ports/UserRepo.js"
import { useCases } from "../../composition/application.js"
import { ClientId } from "../../domain/oidc/Client.js"
import { memoryPorts } from "../support/memoryPorts.js"
import { addUser } from "../support/oidcFixtures.js"

const issuer = "https://id.example.com"
const verifier = "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk"
const challenge = createHash("sha256").update(verifier).digest("base64url")
const START = Date.UTC(2026, 11, 1, 12, 0, 0)

const policy = Layer.succeed(OidcPolicy, {
  issuer,
  codeTtlSeconds: 60,
  metadataDocuments: { enabled: false, allowHttp: false },
  requestTtlSeconds: 900,
  lifetimes: { accessSeconds: 900, refreshSeconds: 86_400, idTokenSeconds: 300 }
})
const world = Authorize.Default.pipe(
  Layer.provide(policy),
  Layer.provideMerge(useCases),
  Layer.provideMerge(memoryPorts(Layer.empty).layer)
)

/** The body over the memory store, on the TestClock set to START first (the layers are built after it). */
const run = <A, E>(
  body: Effect.Effect<A, E, Authorize | OidcClients | Consents | AuthorizationCodes | UserRepo | Audit>
) =>
  Effect.gen(function* () {
    yield* TestClock.setTime(START)
    return yield* body.pipe(Effect.provide(Layer.merge(world, policy).pipe(Layer.provide(policy))))
  })

/** A user, and clients: a confidential one, a public one and a first-party one. */
const setUp = Effect.gen(function* () {
  const userId = yield* addUser("ada@example.com")
  const clients = yield* OidcClients
  for (const [id, overrides] of [
    ["app", {}],
    ["native", { public: true, secret_digest: null, redirect_uris: ["http://127.0.0.1/cb"] }],
    ["own", { first_party: true }]
  ] as const) {
    yield* clients.add({
      client_id: ClientId.make(id),
      name: `Client ${id}`,
      public: false,
      first_party: false,
      self_registered: false,
      redirect_uris: ["https://app.example.com/cb?tenant=a%20b"],
      post_logout_redirect_uris: [],
      scopes: [],
      grants: ["authorization_code"],
      secret_digest: "a".repeat(64),
      created_at: DateTime.unsafeMake(START),
      ...overrides
    })
  }
  return { user_id: userId, auth_time: Math.floor(START / 1000) - 60, amr: ["pwd"] }
})

const params = (overrides: Record<string, string | undefined> = {}) => ({
  client_id: "app",
  redirect_uri: "https://app.example.com/cb?tenant=a%20b",
  response_type: "code",
  scope: "openid email",
  state: "st 1",
  nonce: "n1",
  code_challenge: challenge,
  code_challenge_method: "S256",
  ...overrides
})

const query = (outcome: AuthorizeOutcome) => {
  if (outcome._tag !== "Redirect") throw new Error(`expected a redirect, got ${outcome._tag}`)
  return new URL(outcome.location).searchParams
}

describe("Authorize", () => {
  it.effect("parks a request without a sign-in, then asks consent, then redirects with a code, the state and iss", () =>
    run(
      Effect.gen(function* () {
        const session = yield* setUp
        const flow = yield* Authorize
        const first = yield* flow.authorize(params(), undefined)
        expect(first._tag).toBe("SignIn")
        const id = (first as { request: string }).request
        expect(yield* flow.resume(id, session)).toEqual(expect.objectContaining({ _tag: "Consent", request: id }))
        expect(yield* flow.consentPrompt(id)).toMatchObject({
          client_id: "app",
          client_name: "Client app",
          redirect_host: "app.example.com",
          scopes: ["openid", "email"]
        })
        const answered = yield* flow.answerConsent(id, session, true)
        expect(answered._tag).toBe("Redirect")
        const location = (answered as { location: string }).location
        // The client's own query kept as registered, the answer's parameters after it.
        expect(location.startsWith("https://app.example.com/cb?tenant=a%20b&code=")).toBe(true)
        expect(query(answered).get("state")).toBe("st 1")
        expect(query(answered).get("iss")).toBe(issuer)

        const code = query(answered).get("code") ?? ""
        const stored = yield* (yield* AuthorizationCodes).find(createHash("sha256").update(code).digest("hex"))
        expect(stored).toEqual(
          Option.some(
            expect.objectContaining({
              client_id: "app",
              user_id: session.user_id,
              code_challenge: challenge,
              scopes: ["openid", "email"],
              nonce: "n1",
              auth_time: session.auth_time,
              amr: ["pwd"],
              redeemed_at: null
            })
          )
        )
        // The parked request was answered: it cannot be answered twice.
        expect((yield* Effect.flip(flow.answerConsent(id, session, true)))._tag).toBe("ParkedRequestGone")
        const entries = yield* (yield* Audit).list({ type: "oidc.consent_granted", limit: 10 })
        expect(entries.events.map((entry) => entry.details)).toEqual([{ client_id: "app", scopes: "openid email" }])
      })
    )
  )

  it.effect("a confidential client is not asked again for scopes granted; a public one is, every time", () =>
    run(
      Effect.gen(function* () {
        const session = yield* setUp
        const flow = yield* Authorize
        yield* (yield* Consents).grant(session.user_id, "app", ["openid", "email"], DateTime.unsafeMake(START))
        yield* (yield* Consents).grant(session.user_id, "native", ["openid", "email"], DateTime.unsafeMake(START))
        expect(query(yield* flow.authorize(params(), session)).get("code")).toBeTruthy()
        expect((yield* flow.authorize(params({ scope: "openid email profile" }), session))._tag).toBe("Consent")
        expect((yield* flow.authorize(params({ prompt: "consent" }), session))._tag).toBe("Consent")
        const native = params({ client_id: "native", redirect_uri: "http://127.0.0.1:51000/cb" })
        expect((yield* flow.authorize(native, session))._tag).toBe("Consent")
        expect(query(yield* flow.authorize(params({ client_id: "own" }), session)).get("code")).toBeTruthy()
      })
    )
  )

  it.effect("prompt=none answers login_required and consent_required at the redirect URI, with state and iss", () =>
    run(
      Effect.gen(function* () {
        const session = yield* setUp
        const flow = yield* Authorize
        const out = query(yield* flow.authorize(params({ prompt: "none" }), undefined))
        expect([out.get("error"), out.get("state"), out.get("iss")]).toEqual(["login_required", "st 1", issuer])
        expect(query(yield* flow.authorize(params({ prompt: "none" }), session)).get("error")).toBe("consent_required")
      })
    )
  )

  it.effect(
    "prompt=login and max_age ask for a sign-in made after the request, once; a consent answer needs one too",
    () =>
      run(
        Effect.gen(function* () {
          const session = yield* setUp
          const flow = yield* Authorize
          yield* (yield* Consents).grant(session.user_id, "app", ["openid", "email"], DateTime.unsafeMake(START))
          const parked = yield* flow.authorize(params({ prompt: "login" }), session)
          expect(parked._tag).toBe("SignIn")
          const id = (parked as { request: string }).request
          // The old sign-in is still not enough when the page is left and the request resumed.
          expect((yield* flow.resume(id, session))._tag).toBe("SignIn")
          yield* TestClock.adjust("5 seconds")
          const fresh = { ...session, auth_time: Math.floor(START / 1000) + 5 }
          expect(query(yield* flow.resume(id, fresh)).get("code")).toBeTruthy()

          const aged = yield* flow.authorize(params({ max_age: "30", scope: "openid email profile" }), session)
          expect(aged._tag).toBe("SignIn")
          const agedId = (aged as { request: string }).request
          expect((yield* flow.answerConsent(agedId, session, true))._tag).toBe("SignIn")
          expect((yield* flow.resume(agedId, fresh))._tag).toBe("Consent")
          expect(query(yield* flow.answerConsent(agedId, fresh, true)).get("code")).toBeTruthy()
        })
      )
  )

  it.effect("a refusal sends access_denied back and stores no consent; errors before the user acts", () =>
    run(
      Effect.gen(function* () {
        const session = yield* setUp
        const flow = yield* Authorize
        const parked = (yield* flow.authorize(params(), session)) as { request: string }
        expect(query(yield* flow.answerConsent(parked.request, session, false)).get("error")).toBe("access_denied")
        expect(yield* (yield* Consents).find(session.user_id, "app")).toEqual(Option.none())

        expect(yield* flow.authorize(params({ redirect_uri: "https://evil.example/cb" }), session)).toMatchObject({
          _tag: "ErrorPage",
          error: "invalid_request"
        })
        expect(yield* flow.authorize(params({ client_id: "nobody" }), session)).toMatchObject({
          _tag: "ErrorPage",
          error: "invalid_client"
        })
        const plain = query(yield* flow.authorize(params({ code_challenge_method: "plain" }), session))
        expect([plain.get("error"), plain.get("state"), plain.get("iss")]).toEqual(["invalid_request", "st 1", issuer])
        expect((yield* Effect.flip(flow.resume("no-such-request", session)))._tag).toBe("ParkedRequestGone")
      })
    )
  )

  it.effect("a parked request lives 15 minutes", () =>
    run(
      Effect.gen(function* () {
        const session = yield* setUp
        const flow = yield* Authorize
        const parked = (yield* flow.authorize(params(), undefined)) as { request: string }
        yield* TestClock.adjust("15 minutes")
        expect((yield* Effect.flip(flow.resume(parked.request, session)))._tag).toBe("ParkedRequestGone")
      })
    )
  )
})
