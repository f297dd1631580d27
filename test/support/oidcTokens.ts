import { createHash, generateKeyPairSync } from "node:crypto"
import { DateTime, Effect, Layer } from "effect"
import { Authorize } from "../../application/oidc/Authorize.js"
import { OidcPolicy } from "../../application/oidc/OidcPolicy.js"
import { Token } from "../../application/oidc/Token.js"
import type { TokenEndpointError } from "../../application/oidc/TokenAnswers.js"
import { OidcClients } from "../../application/ports/OidcClients.js"
import { ProviderTokens } from "../../application/ports/ProviderTokens.js"
import { RoleRepo } from "../../application/ports/RoleRepo.js"
import { UserRepo } from "../../application/ports/UserRepo.js"
import { useCases } from "../../composition/application.js"
import { ClientId } from "../../domain/oidc/Client.js"
import { RoleName, UserId } from "../../domain/User.js"
import * as ProviderTokensJose from "../../infrastructure/crypto/ProviderTokensJose.js"
import { addUser } from "./oidcFixtures.js"

// The token endpoint's use cases over a deployment's ports, with one user and the clients the
// token tests redeem for (test/application/oidc-token*.test.ts).

export const issuer = "https://id.example.com"
export const START = Date.UTC(2026, 11, 1, 12, 0, 0)
export const verifier = "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk"
export const challenge = createHash("sha256").update(verifier).digest("base64url")
export const secret = "the-client-secret-of-app-0123456789abcdef"
export const redirect = "https://app.example.com/cb"

export const policy = Layer.succeed(OidcPolicy, {
  issuer,
  codeTtlSeconds: 60,
  metadataDocuments: { enabled: false, allowHttp: false },
  requestTtlSeconds: 900,
  lifetimes: { accessSeconds: 900, refreshSeconds: 86_400, idTokenSeconds: 300 }
})
export const signer = Layer.effect(
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
export const none = { basic: undefined, client_id: undefined, client_secret: undefined }
export const basic = { ...none, basic: { client_id: "app", client_secret: secret } }

/** Ada, with a role and its permission, and the clients: app (confidential), native (public), job (machine). */
export const setUp = Effect.gen(function* () {
  const userId = yield* addUser("ada@example.com")
  yield* (yield* UserRepo).assignRole(UserId.make(userId), RoleName.make("editor"))
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
  return { user_id: userId, auth_time: Math.floor(START / 1000) - 30, amr: ["hwk", "user"] }
})

/** A code for `client_id`, from Ada's browser session (first-party clients: no consent). */
export const codeFor = (
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

export const redeem = (code: string, presented = basic as Parameters<Token["exchange"]>[1], overrides = {}) =>
  Effect.flatMap(Token, (token) =>
    token.exchange(
      { grant_type: "authorization_code", code, redirect_uri: redirect, code_verifier: verifier, ...overrides },
      presented
    )
  )

export const errorOf = <A, R>(effect: Effect.Effect<A, TokenEndpointError | { _tag: string }, R>) =>
  Effect.map(Effect.flip(effect), (error) => ("error" in error ? error.error : error._tag))

/** Authorize and Token over `ports` (a deployment's, memoryPorts), with the provider's policy and an RSA key. */
export const providerWorld = <A, E, R>(ports: Layer.Layer<A, E, R>) =>
  Layer.mergeAll(Authorize.Default, Token.Default).pipe(
    Layer.provideMerge(Layer.merge(policy, signer)),
    Layer.provideMerge(useCases),
    Layer.provideMerge(ports)
  )
