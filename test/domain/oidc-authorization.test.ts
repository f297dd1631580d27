import { DateTime } from "effect"
import { describe, expect, it } from "vitest"
import {
  type AuthorizationRequest,
  decideAuthorization,
  isCodeVerifier,
  nextStep
} from "../../domain/oidc/Authorization.js"
import { type Client, ClientId } from "../../domain/oidc/Client.js"

const client = (overrides: Partial<Client> = {}): Client => ({
  client_id: ClientId.make("app"),
  name: "App",
  public: false,
  first_party: false,
  self_registered: false,
  redirect_uris: ["https://app.example.com/cb"],
  post_logout_redirect_uris: [],
  scopes: ["reports:read"],
  grants: ["authorization_code"],
  secret_digest: "00",
  ...overrides
})

const challenge = "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM"
const valid = {
  client_id: "app",
  redirect_uri: "https://app.example.com/cb",
  response_type: "code",
  scope: "openid email",
  state: "s1",
  code_challenge: challenge,
  code_challenge_method: "S256"
}

describe("decideAuthorization", () => {
  it("accepts a code request with PKCE S256, keeping state, nonce and login_hint, ignoring unknown parameters", () => {
    const decision = decideAuthorization(
      { ...valid, nonce: "n1", login_hint: "ada@example.com", ui_locales: "fr", claims_locales: "x" },
      client()
    )
    expect(decision).toMatchObject({
      _tag: "Accepted",
      request: {
        client_id: "app",
        redirect_uri: valid.redirect_uri,
        scopes: ["openid", "email"],
        state: "s1",
        nonce: "n1",
        code_challenge: challenge,
        prompt: [],
        max_age: null,
        login_hint: "ada@example.com"
      }
    })
  })

  it("keeps the client's own scopes and drops the ones it may not have, once each", () => {
    const decision = decideAuthorization({ ...valid, scope: "openid groups reports:read openid admin" }, client())
    expect(decision).toMatchObject({ _tag: "Accepted", request: { scopes: ["openid", "reports:read"] } })
  })

  it.each<[string, Record<string, string | undefined>, string]>([
    ["no client_id", { client_id: undefined }, "invalid_request"],
    ["an unknown client", { client_id: "nobody" }, "invalid_client"],
    ["an unregistered redirect_uri", { redirect_uri: "https://evil.example/cb" }, "invalid_request"],
    ["no redirect_uri in an OpenID request", { redirect_uri: undefined }, "invalid_request"]
  ])("shows an error page, never redirecting, for %s", (_, change, error) => {
    const decision = decideAuthorization({ ...valid, ...change }, change.client_id === "nobody" ? undefined : client())
    expect(decision).toMatchObject({ _tag: "ErrorPage", error })
  })

  it("takes the one registered redirect_uri when a plain OAuth request names none", () => {
    const decision = decideAuthorization({ ...valid, scope: "reports:read", redirect_uri: undefined }, client())
    expect(decision).toMatchObject({ _tag: "Accepted", request: { redirect_uri: "https://app.example.com/cb" } })
  })

  it.each([
    ["no response_type", { response_type: undefined }, "invalid_request"],
    ["response_type=token", { response_type: "token" }, "unsupported_response_type"],
    ["no code_challenge", { code_challenge: undefined }, "invalid_request"],
    ["no code_challenge_method (plain by default)", { code_challenge_method: undefined }, "invalid_request"],
    ["code_challenge_method=plain", { code_challenge_method: "plain" }, "invalid_request"],
    ["a challenge that is no S256 digest", { code_challenge: "short" }, "invalid_request"],
    ["an unknown prompt", { prompt: "maybe" }, "invalid_request"],
    ["prompt=none with login", { prompt: "none login" }, "invalid_request"],
    ["a max_age that is no number", { max_age: "-1" }, "invalid_request"],
    ["response_mode=fragment", { response_mode: "fragment" }, "invalid_request"],
    ["a request object", { request: "eyJ..." }, "request_not_supported"],
    ["a request_uri", { request_uri: "https://app.example.com/r" }, "request_uri_not_supported"]
  ])("redirects %s back as an error with the state", (_, change, error) => {
    const decision = decideAuthorization({ ...valid, ...change }, client())
    expect(decision).toMatchObject({ _tag: "RedirectError", error, redirect_uri: valid.redirect_uri, state: "s1" })
  })

  it("shows a self-registered client's errors on the page instead of redirecting (RFC 9700 §4.11.2)", () => {
    const decision = decideAuthorization({ ...valid, code_challenge: undefined }, client({ self_registered: true }))
    expect(decision).toMatchObject({ _tag: "ErrorPage", error: "invalid_request" })
  })

  it("matches a loopback redirect_uri on any port", () => {
    const native = client({ public: true, redirect_uris: ["http://127.0.0.1/cb"] })
    const decision = decideAuthorization({ ...valid, redirect_uri: "http://127.0.0.1:49152/cb" }, native)
    expect(decision).toMatchObject({ _tag: "Accepted", request: { redirect_uri: "http://127.0.0.1:49152/cb" } })
  })
})

describe("isCodeVerifier (RFC 7636 §4.1)", () => {
  it.each([
    ["43 unreserved characters", "a".repeat(43), true],
    ["128", `${"a-._~".repeat(25)}abc`, true],
    ["42", "a".repeat(42), false],
    ["129", "a".repeat(129), false],
    ["a reserved character", `${"a".repeat(42)}+`, false]
  ])("%s: %s", (_, value, expected) => expect(isCodeVerifier(value)).toBe(expected))
})

describe("nextStep", () => {
  const now = DateTime.unsafeMake("2026-12-01T12:00:00Z")
  const nowSeconds = Math.floor(DateTime.toEpochMillis(now) / 1000)
  const request = (overrides: Partial<AuthorizationRequest> = {}): AuthorizationRequest => ({
    client_id: "app",
    redirect_uri: "https://app.example.com/cb",
    scopes: ["openid", "email"],
    state: null,
    nonce: null,
    code_challenge: challenge,
    prompt: [],
    max_age: null,
    login_hint: null,
    resources: [],
    ...overrides
  })
  const signedIn = { user_id: "u1", auth_time: nowSeconds - 600 }

  it("asks for a sign-in without one, and tells prompt=none's client login_required", () => {
    expect(nextStep(request(), client(), undefined, false, undefined, now)._tag).toBe("SignIn")
    expect(nextStep(request({ prompt: ["none"] }), client(), undefined, false, undefined, now)).toMatchObject({
      _tag: "Refuse",
      error: "login_required"
    })
  })

  it("asks once more for prompt=login and for a sign-in older than max_age, not again once signed in for the request", () => {
    expect(nextStep(request({ prompt: ["login"] }), client(), signedIn, false, ["openid", "email"], now)._tag).toBe(
      "SignIn"
    )
    expect(nextStep(request({ max_age: 599 }), client(), signedIn, false, ["openid", "email"], now)._tag).toBe("SignIn")
    expect(nextStep(request({ max_age: 600 }), client(), signedIn, false, ["openid", "email"], now)._tag).toBe(
      "IssueCode"
    )
    expect(nextStep(request({ prompt: ["login"] }), client(), signedIn, true, ["openid", "email"], now)._tag).toBe(
      "IssueCode"
    )
  })

  it("asks a confidential client's consent only for scopes not granted yet, or when prompt=consent asks", () => {
    expect(nextStep(request(), client(), signedIn, false, undefined, now)._tag).toBe("Consent")
    expect(nextStep(request(), client(), signedIn, false, ["openid"], now)._tag).toBe("Consent")
    expect(nextStep(request(), client(), signedIn, false, ["openid", "email", "profile"], now)._tag).toBe("IssueCode")
    expect(nextStep(request({ prompt: ["consent"] }), client(), signedIn, false, ["openid", "email"], now)._tag).toBe(
      "Consent"
    )
    expect(nextStep(request({ prompt: ["none"] }), client(), signedIn, false, undefined, now)).toMatchObject({
      _tag: "Refuse",
      error: "consent_required"
    })
  })

  it("asks a public client's consent every time, and a first-party client's never", () => {
    const granted = ["openid", "email"]
    expect(nextStep(request(), client({ public: true }), signedIn, false, granted, now)._tag).toBe("Consent")
    expect(nextStep(request(), client({ first_party: true }), signedIn, false, undefined, now)._tag).toBe("IssueCode")
    expect(
      nextStep(request({ prompt: ["consent"] }), client({ first_party: true }), signedIn, false, undefined, now)._tag
    ).toBe("IssueCode")
  })
})
