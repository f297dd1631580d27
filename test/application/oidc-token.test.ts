import { describe, expect, it } from "@effect/vitest"
import { DateTime, Effect, Layer, TestClock } from "effect"
import { decodeJwt } from "jose"
import { Audit } from "../../application/Audit.js"
import { Token } from "../../application/oidc/Token.js"
import { OidcGrants } from "../../application/ports/OidcGrants.js"
import { UserRepo } from "../../application/ports/UserRepo.js"
import { UserId } from "../../domain/User.js"
import { memoryPorts } from "../support/memoryPorts.js"
import {
  basic,
  codeFor,
  errorOf,
  issuer,
  none,
  providerWorld,
  redeem,
  redirect,
  START,
  secret,
  setUp,
  verifier
} from "../support/oidcTokens.js"

const world = providerWorld(memoryPorts(Layer.empty).layer)

type World = Layer.Layer.Success<typeof world>
const run = <A, E>(body: Effect.Effect<A, E, World>) =>
  Effect.gen(function* () {
    yield* TestClock.setTime(START)
    return yield* body.pipe(Effect.provide(world))
  })

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
