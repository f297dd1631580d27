import { describe, expect, it } from "vitest"
import {
  authenticateClient,
  type Client,
  ClientId,
  type PresentedClient,
  redirectUriMatches,
  redirectUriProblem
} from "../../domain/oidc/Client.js"

const registered = ["https://app.example.com/callback", "http://127.0.0.1/cb", "http://[::1]:8080/cb?x=1"]

describe("redirectUriMatches: exact, but for a loopback URI's port (RFC 8252 §7.3)", () => {
  it.each([
    "https://app.example.com/callback",
    "http://127.0.0.1/cb",
    "http://127.0.0.1:51234/cb",
    "http://127.0.0.1:1/cb",
    "http://[::1]/cb?x=1",
    "http://[::1]:65535/cb?x=1"
  ])("takes %s", (uri) => expect(redirectUriMatches(registered, uri)).toBe(true))

  // The attacks of issue 52: each is another URI, never the registered one.
  it.each([
    ["a prefix", "https://app.example.com/call"],
    ["a longer path", "https://app.example.com/callback/evil"],
    ["a suffix in the query", "https://app.example.com/callback?next=https://evil.example"],
    ["a trailing slash", "https://app.example.com/callback/"],
    ["a trailing dot in the host", "https://app.example.com./callback"],
    ["another case in the host", "https://APP.example.com/callback"],
    ["another case in the path", "https://app.example.com/Callback"],
    ["another case in the scheme", "HTTPS://app.example.com/callback"],
    ["an encoded path", "https://app.example.com/%63allback"],
    ["an encoded slash", "https://app.example.com%2Fcallback"],
    ["userinfo before the host", "https://app.example.com@evil.example/callback"],
    ["userinfo on a loopback URI", "http://127.0.0.1:80@evil.example/cb"],
    ["a fragment", "https://app.example.com/callback#x"],
    ["a fragment on a loopback URI", "http://127.0.0.1:5000/cb#x"],
    ["another port on a non-loopback host", "https://app.example.com:8443/callback"],
    ["http for https", "http://app.example.com/callback"],
    ["another loopback path", "http://127.0.0.1:5000/cb/extra"],
    ["another loopback query", "http://[::1]:5000/cb?x=2"],
    ["localhost for 127.0.0.1", "http://localhost:5000/cb"],
    ["the IPv6 loopback for the IPv4 one", "http://[::1]:5000/cb"],
    ["a port out of range", "http://127.0.0.1:70000/cb"],
    ["a subdomain", "https://evil.app.example.com/callback"]
  ])("refuses %s: %s", (_, uri) => expect(redirectUriMatches(registered, uri)).toBe(false))
})

describe("redirectUriProblem: what may be registered", () => {
  it.each([
    "https://app.example.com/callback",
    "http://127.0.0.1/cb",
    "http://[::1]:3000/cb",
    "http://localhost:3000/callback",
    "com.example.app:/oauth2redirect"
  ])("takes %s", (uri) => expect(redirectUriProblem(uri)).toBeUndefined())

  it.each([
    ["a relative URI", "/callback", "absolute"],
    ["a fragment", "https://app.example.com/cb#x", "fragment"],
    ["userinfo", "https://user:pw@app.example.com/cb", "user name"],
    ["plain http to a remote host", "http://app.example.com/cb", "https"],
    ["a scheme that is not private-use", "javascript:alert(1)", "private-use"]
  ])("refuses %s", (_, uri, said) => expect(redirectUriProblem(uri)).toContain(said))
})

describe("authenticateClient (RFC 6749 §2.3)", () => {
  const confidential: Client = {
    client_id: ClientId.make("app"),
    name: "App",
    public: false,
    first_party: false,
    self_registered: false,
    redirect_uris: [],
    post_logout_redirect_uris: [],
    scopes: [],
    grants: ["authorization_code"],
    secret_digest: "d".repeat(64)
  }
  const native: Client = { ...confidential, client_id: ClientId.make("native"), public: true, secret_digest: null }
  const none = { basic: undefined, client_id: undefined, client_secret: undefined }
  const right = "d".repeat(64)

  it("proves a confidential client by its secret in the header or the body, and a public one by its id", () => {
    expect(
      authenticateClient({ ...none, basic: { client_id: "app", client_secret: "s" } }, confidential, right)
    ).toMatchObject({ _tag: "Authenticated", method: "client_secret_basic" })
    expect(authenticateClient({ ...none, client_id: "app", client_secret: "s" }, confidential, right)).toMatchObject({
      _tag: "Authenticated",
      method: "client_secret_post"
    })
    expect(authenticateClient({ ...none, client_id: "native" }, native, undefined)).toMatchObject({
      _tag: "Authenticated",
      method: "none"
    })
  })

  it.each<[string, PresentedClient, Client | undefined, string | undefined]>([
    ["an unknown client", { ...none, client_id: "app", client_secret: "s" }, undefined, right],
    ["a wrong secret", { ...none, client_id: "app", client_secret: "s" }, confidential, "e".repeat(64)],
    ["a confidential client without a secret", { ...none, client_id: "app" }, confidential, undefined],
    [
      "a secret in the header and the body",
      { basic: { client_id: "app", client_secret: "s" }, client_id: "app", client_secret: "s" },
      confidential,
      right
    ],
    [
      "a header naming another client than the body",
      { ...none, basic: { client_id: "app", client_secret: "s" }, client_id: "other" },
      confidential,
      right
    ],
    ["a public client sending a secret", { ...none, client_id: "native", client_secret: "s" }, native, right],
    ["another client's id", { ...none, client_id: "native" }, confidential, undefined]
  ])("refuses %s as invalid_client", (_, presented, client, digest) => {
    expect(authenticateClient(presented, client, digest)._tag).toBe("Refused")
  })
})
