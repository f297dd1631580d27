import { createHash, generateKeyPairSync } from "node:crypto"
import { describe, expect, it } from "@effect/vitest"
import { DateTime, Effect, Layer, Option, TestClock } from "effect"
import { decodeJwt } from "jose"
import { Audit } from "../../application/Audit.js"
import { Authorize } from "../../application/oidc/Authorize.js"
import { OidcPolicy } from "../../application/oidc/OidcPolicy.js"
import { Token } from "../../application/oidc/Token.js"
import type { TokenEndpointError } from "../../application/oidc/TokenAnswers.js"
import { OidcClients } from "../../application/ports/OidcClients.js"
import { OidcGrants } from "../../application/ports/OidcGrants.js"
import { ProviderTokens } from "../../application/ports/ProviderTokens.js"
import { RoleRepo } from "../../application/ports/RoleRepo.js"
import { UserRepo } from "../../application/ports/UserRepo.js"
import { useCases } from "../../composition/application.js"
import { ClientId } from "../../domain/oidc/Client.js"
import { type Email, RoleName, UserId } from "../../domain/User.js"
import * as ProviderTokensJose from "../../infrastructure/crypto/ProviderTokensJose.js"
import { memoryPorts } from "../support/memoryPorts.js"

const issuer = "https://id.example.com"
const START = Date.UTC(2026, 11, 1, 12, 0, 0)
const verifier = "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk"
const challenge = createHash("sha256").update(verifier).digest("base64url")
const secret = "the-client-secret-of-app-0123456789abcdef"
const redirect = "https://app.example.com/cb"

const policy = Layer.succeed(OidcPolicy, {
  issuer,
  codeTtlSeconds: 60,
  metadataDocuments: { enabled: false, allowHttp: false },
  requestTtlSeconds: 900,
  lifetimes: { accessSeconds: 900, refreshSeconds: 86_400, idTokenSeconds: 300 }
})
const signer = Layer.effect(
  ProviderTokens,
  Effect.map(
    Effect.clockWith((clock) => Effect.succeed(clock)),
    (clock) =>
      ProviderTokensJose.make(
        issuer,
        { key: generateKeyPairSync("rsa", { modulusLength: 2048 }).privateKey, kid: "k1" },
        () => clock.unsafeCurrentTimeMillis()
      )
  )
)
const world = Layer.mergeAll(Authorize.Default, Token.Default).pipe(
  Layer.provideMerge(Layer.merge(policy, signer)),
  Layer.provideMerge(useCases),
  Layer.provideMerge(memoryPorts(Layer.empty).layer)
)

type World = Layer.Layer.Success<typeof world>
const run = <A, E>(body: Effect.Effect<A, E, World>) =>
  Effect.gen(function* () {
    yield* TestClock.setTime(START)
    return yield* body.pipe(Effect.provide(world))
  })

const none = { basic: undefined, client_id: undefined, client_secret: undefined }
const basic = { ...none, basic: { client_id: "app", client_secret: secret } }

/** Ada, with a role and its permission, and the clients: app (confidential), native (public), job (machine). */
const setUp = Effect.gen(function* () {
  const user = yield* (yield* UserRepo).create({
    email: "ada@example.com" as Email,
    hashed_password: Option.none(),
    is_active: true,
    is_verified: true,
    is_superuser: false
  })
  yield* (yield* UserRepo).assignRole(user.id, RoleName.make("editor"))
  yield* (yield* RoleRepo).assignPermission(RoleName.make("editor"), "posts:write" as never)
  const clients = yield* OidcClients
  const base = {
    public: false,
    first_party: true,
    self_registered: false,
    redirect_uris: [redirect],
    post_logout_redirect_uris: [],
    scopes: ["reports:read"],
    grants: ["authorization_code"] as const,
    secret_digest: createHash("sha256").update(secret).digest("hex"),
    created_at: DateTime.unsafeMake(START)
  }
  yield* clients.add({ ...base, client_id: ClientId.make("app"), name: "App" })
  yield* clients.add({ ...base, client_id: ClientId.make("other"), name: "Other" })
  yield* clients.add({ ...base, client_id: ClientId.make("native"), name: "Native", public: true, secret_digest: null })
  yield* clients.add({
    ...base,
    client_id: ClientId.make("job"),
    name: "Job",
    grants: ["authorization_code", "client_credentials"]
  })
  return { user_id: user.id as string, auth_time: Math.floor(START / 1000) - 30, amr: ["hwk", "user"] }
})

/** A code for `client_id`, from Ada's browser session (first-party clients: no consent). */
const codeFor = (
  session: { user_id: string; auth_time: number; amr: ReadonlyArray<string> },
  scope: string,
  clientId = "app"
) =>
  Effect.gen(function* () {
    const outcome = yield* (yield* Authorize).authorize(
      {
        client_id: clientId,
        redirect_uri: redirect,
        response_type: "code",
        scope,
        nonce: "n-1",
        code_challenge: challenge,
        code_challenge_method: "S256"
      },
      session
    )
    if (outcome._tag !== "Redirect") throw new Error(`no code: ${outcome._tag}`)
    return new URL(outcome.location).searchParams.get("code") ?? ""
  })

const redeem = (code: string, presented = basic as Parameters<Token["exchange"]>[1], overrides = {}) =>
  Effect.flatMap(Token, (token) =>
    token.exchange(
      { grant_type: "authorization_code", code, redirect_uri: redirect, code_verifier: verifier, ...overrides },
      presented
    )
  )

const errorOf = <A, R>(effect: Effect.Effect<A, TokenEndpointError | { _tag: string }, R>) =>
  Effect.map(Effect.flip(effect), (error) => ("error" in error ? error.error : error._tag))

describe("Token: authorization_code", () => {
  it.effect(
    "redeems a code for an RFC 9068 access token, an ID token with the scope's claims, and a refresh token",
    () =>
      run(
        Effect.gen(function* () {
          const session = yield* setUp
          const code = yield* codeFor(session, "openid email permissions offline_access")
          const answer = yield* redeem(code)
          expect(answer).toMatchObject({
            token_type: "Bearer",
            expires_in: 900,
            scope: "openid email permissions offline_access"
          })
          expect(answer.refresh_token).toMatch(/^[A-Za-z0-9_-]{43}$/)
          expect(decodeJwt(answer.access_token)).toMatchObject({
            iss: issuer,
            sub: session.user_id,
            aud: "app",
            client_id: "app",
            scope: "openid email permissions offline_access",
            auth_time: session.auth_time
          })
          expect(decodeJwt(answer.id_token ?? "")).toMatchObject({
            iss: issuer,
            sub: session.user_id,
            aud: "app",
            azp: "app",
            nonce: "n-1",
            auth_time: session.auth_time,
            amr: ["hwk", "user"],
            email: "ada@example.com",
            email_verified: true,
            roles: ["editor"],
            permissions: ["posts:write"]
          })
        })
      )
  )

  it.effect("gives no refresh token to an OpenID grant without offline_access, and one to a plain OAuth grant", () =>
    run(
      Effect.gen(function* () {
        const session = yield* setUp
        const openid = yield* redeem(yield* codeFor(session, "openid email"))
        expect(openid.refresh_token).toBeUndefined()
        expect(openid.id_token).toBeDefined()
        const plain = yield* redeem(yield* codeFor(session, "reports:read"))
        expect(plain.refresh_token).toBeDefined()
        expect(plain.id_token).toBeUndefined()
      })
    )
  )

  it.effect("refuses a code from one client redeemed by another, a wrong verifier or redirect, an expired code", () =>
    run(
      Effect.gen(function* () {
        const session = yield* setUp
        const code = yield* codeFor(session, "openid")
        const other = { ...none, basic: { client_id: "other", client_secret: secret } }
        expect(yield* errorOf(redeem(code, other))).toBe("invalid_grant")
        expect(yield* errorOf(redeem(code, basic, { code_verifier: `${verifier.slice(0, -1)}x` }))).toBe(
          "invalid_grant"
        )
        expect(yield* errorOf(redeem(code, basic, { code_verifier: undefined }))).toBe("invalid_grant")
        expect(yield* errorOf(redeem(code, basic, { redirect_uri: `${redirect}/x` }))).toBe("invalid_grant")
        // None of those spent it.
        expect((yield* redeem(code)).access_token).toBeDefined()
        const late = yield* codeFor(session, "openid")
        yield* TestClock.adjust("61 seconds")
        expect(yield* errorOf(redeem(late))).toBe("invalid_grant")
      })
    )
  )

  it.effect("a code presented twice is refused, and the grant its first use started ends", () =>
    run(
      Effect.gen(function* () {
        const session = yield* setUp
        const first = yield* redeem(yield* codeFor(session, "reports:read"))
        const code = yield* codeFor(session, "openid offline_access")
        const issued = yield* redeem(code)
        expect(yield* errorOf(redeem(code))).toBe("invalid_grant")
        const refresh = (token: string) =>
          Effect.flatMap(Token, (t) => t.exchange({ grant_type: "refresh_token", refresh_token: token }, basic))
        expect(yield* errorOf(refresh(issued.refresh_token ?? ""))).toBe("invalid_grant")
        // Another grant of the same client and user goes on.
        expect((yield* refresh(first.refresh_token ?? "")).access_token).toBeDefined()
      })
    )
  )

  it.effect("authenticates the client: a wrong secret or none is invalid_client; a public client by its id alone", () =>
    run(
      Effect.gen(function* () {
        const session = yield* setUp
        const code = yield* codeFor(session, "openid")
        expect(yield* errorOf(redeem(code, { ...none, basic: { client_id: "app", client_secret: "wrong" } }))).toBe(
          "invalid_client"
        )
        expect(yield* errorOf(redeem(code, { ...none, client_id: "app" }))).toBe("invalid_client")
        const nativeCode = yield* codeFor(session, "openid", "native")
        expect((yield* redeem(nativeCode, { ...none, client_id: "native" })).id_token).toBeDefined()
        const posted = yield* codeFor(session, "openid")
        expect((yield* redeem(posted, { ...none, client_id: "app", client_secret: secret })).id_token).toBeDefined()
      })
    )
  )

  it.effect("refuses a code of a user deactivated since", () =>
    run(
      Effect.gen(function* () {
        const session = yield* setUp
        const code = yield* codeFor(session, "openid")
        yield* (yield* UserRepo).setFlags(UserId.make(session.user_id), { is_active: false })
        expect(yield* errorOf(redeem(code))).toBe("invalid_grant")
      })
    )
  )
})

describe("Token: refresh_token and client_credentials", () => {
  it.effect("rotates a grant's refresh token; the old one presented again ends the grant, audited", () =>
    run(
      Effect.gen(function* () {
        const session = yield* setUp
        const issued = yield* redeem(yield* codeFor(session, "openid offline_access reports:read"))
        const refresh = (token: string, scope?: string) =>
          Effect.flatMap(Token, (t) =>
            t.exchange({ grant_type: "refresh_token", refresh_token: token, ...(scope ? { scope } : {}) }, basic)
          )
        const narrowed = yield* refresh(issued.refresh_token ?? "", "reports:read")
        expect(narrowed.scope).toBe("reports:read")
        expect(narrowed.id_token).toBeUndefined()
        expect(yield* errorOf(refresh(narrowed.refresh_token ?? "", "openid profile"))).toBe("invalid_scope")

        expect(yield* errorOf(refresh(issued.refresh_token ?? ""))).toBe("invalid_grant")
        expect(yield* errorOf(refresh(narrowed.refresh_token ?? ""))).toBe("invalid_grant")
        const audited = yield* (yield* Audit).list({ type: "refresh.reuse_detected", limit: 5 })
        expect(audited.events.map((event) => event.details.client_id)).toEqual(["app"])
        const grants = yield* (yield* OidcGrants).liveOfUser(session.user_id, DateTime.unsafeMake(START))
        expect(grants).toEqual([])
      })
    )
  )

  it.effect("another client's refresh token reads as unknown", () =>
    run(
      Effect.gen(function* () {
        const session = yield* setUp
        const issued = yield* redeem(yield* codeFor(session, "reports:read"))
        const other = { ...none, basic: { client_id: "other", client_secret: secret } }
        const stolen = Effect.flatMap(Token, (t) =>
          t.exchange({ grant_type: "refresh_token", refresh_token: issued.refresh_token ?? "" }, other)
        )
        expect(yield* errorOf(stolen)).toBe("invalid_grant")
        // The owner's token still works: the thief's attempt is no reuse.
        expect(
          (yield* Effect.flatMap(Token, (t) =>
            t.exchange({ grant_type: "refresh_token", refresh_token: issued.refresh_token ?? "" }, basic)
          )).access_token
        ).toBeDefined()
      })
    )
  )

  it.effect("client_credentials: a token for the client itself, its own scopes only, no refresh token", () =>
    run(
      Effect.gen(function* () {
        yield* setUp
        const job = { ...none, basic: { client_id: "job", client_secret: secret } }
        const exchange = (scope: string, presented = job) =>
          Effect.flatMap(Token, (t) => t.exchange({ grant_type: "client_credentials", scope }, presented))
        const answer = yield* exchange("reports:read")
        expect(answer.refresh_token).toBeUndefined()
        expect(decodeJwt(answer.access_token)).toMatchObject({ sub: "job", client_id: "job", scope: "reports:read" })
        expect(yield* errorOf(exchange("openid"))).toBe("invalid_scope")
        expect(yield* errorOf(exchange("reports:read", basic))).toBe("unauthorized_client")
      })
    )
  )

  it.effect("refuses a request without grant_type, or with one it does not support", () =>
    run(
      Effect.gen(function* () {
        yield* setUp
        const token = yield* Token
        expect(yield* errorOf(token.exchange({}, basic))).toBe("invalid_request")
        expect(yield* errorOf(token.exchange({ grant_type: "password" }, basic))).toBe("unsupported_grant_type")
      })
    )
  )
})
