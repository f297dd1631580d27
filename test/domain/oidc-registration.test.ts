import { describe, expect, it } from "vitest"
import { decideMetadataDocument, decideRegistration, isMetadataDocumentUrl } from "../../domain/oidc/Registration.js"

describe("a client registering itself (RFC 7591)", () => {
  it("registers a public client of https or loopback URIs, named by its redirect host when unnamed", () => {
    expect(decideRegistration({ redirect_uris: ["https://app.example.com/cb", "http://127.0.0.1/cb"] })).toMatchObject({
      _tag: "Register",
      registration: { name: "app.example.com", redirect_uris: ["https://app.example.com/cb", "http://127.0.0.1/cb"] }
    })
    expect(
      decideRegistration({ redirect_uris: ["http://localhost:6274/cb"], client_name: " Inspector " })
    ).toMatchObject({
      registration: { name: "Inspector" }
    })
  })

  it("refuses a secret, other grants, other response types, and URIs a stranger could not be trusted with", () => {
    const refusal = (metadata: unknown) => {
      const decision = decideRegistration(metadata)
      return decision._tag === "Refuse" ? decision.error : "registered"
    }
    const uris = { redirect_uris: ["https://app.example.com/cb"] }
    expect(refusal({ ...uris, token_endpoint_auth_method: "client_secret_post" })).toBe("invalid_client_metadata")
    expect(refusal({ ...uris, grant_types: ["authorization_code", "implicit"] })).toBe("invalid_client_metadata")
    expect(refusal({ ...uris, response_types: ["code", "token"] })).toBe("invalid_client_metadata")
    expect(refusal({ ...uris, client_name: "a\u0007b" })).toBe("invalid_client_metadata")
    expect(refusal({ redirect_uris: ["http://app.example.com/cb"] })).toBe("invalid_redirect_uri")
    expect(refusal({ redirect_uris: ["com.example.app:/cb"] })).toBe("invalid_redirect_uri")
    expect(refusal({ redirect_uris: Array.from({ length: 11 }, (_, n) => `https://a.example/${n}`) })).toBe(
      "invalid_redirect_uri"
    )
    expect(refusal(null)).toBe("invalid_client_metadata")
  })
})

describe("redirect URIs of other schemes, registering or by a document", () => {
  // Where a code would be sent: a script, the file system, another protocol, an app's scheme no
  // stranger can be trusted to own, or a look-alike of loopback.
  const others = [
    "javascript:alert(1)",
    "JavaScript://app.example.com/%0aalert(1)",
    "data:text/html,<script>alert(1)</script>",
    "file:///etc/passwd",
    "ftp://app.example.com/cb",
    "ws://127.0.0.1/cb",
    "wss://app.example.com/cb",
    "blob:https://app.example.com/4b1c",
    "com.example.app:/cb",
    "http://app.example.com/cb",
    "http://localhost.evil.example/cb",
    "http://127.0.0.1.evil.example/cb",
    "//app.example.com/cb",
    "/cb"
  ]

  it("refuses each, in registration and in a metadata document", () => {
    const url = "https://agent.example.com/client.json"
    for (const uri of others) {
      expect(decideRegistration({ redirect_uris: [uri] }), uri).toMatchObject({
        _tag: "Refuse",
        error: "invalid_redirect_uri"
      })
      expect(decideMetadataDocument(url, { client_id: url, redirect_uris: [uri] }), uri).toMatchObject({
        _tag: "Refuse",
        error: "invalid_redirect_uri"
      })
      // Beside a good one, the bad one still refuses the whole registration.
      expect(decideRegistration({ redirect_uris: ["https://app.example.com/cb", uri] })._tag, uri).toBe("Refuse")
      expect(
        decideRegistration({ redirect_uris: ["https://app.example.com/cb"], post_logout_redirect_uris: [uri] })._tag,
        uri
      ).toBe("Refuse")
    }
  })
})

describe("a client ID metadata document", () => {
  const url = "https://agent.example.com/client.json"
  const document = { client_id: url, client_name: "Agent", redirect_uris: ["http://127.0.0.1/cb"] }

  it("registers the document that names its own URL and no secret", () => {
    expect(decideMetadataDocument(url, document)).toMatchObject({ _tag: "Register", registration: { name: "Agent" } })
    expect(decideMetadataDocument(url, { ...document, token_endpoint_auth_method: "none" })._tag).toBe("Register")
  })

  it("refuses a document naming another client_id, a secret, or another authentication", () => {
    expect(decideMetadataDocument(url, { ...document, client_id: "https://evil.example/client.json" })._tag).toBe(
      "Refuse"
    )
    expect(decideMetadataDocument(url, { ...document, client_secret: "s" })._tag).toBe("Refuse")
    expect(decideMetadataDocument(url, { ...document, token_endpoint_auth_method: "private_key_jwt" })._tag).toBe(
      "Refuse"
    )
    expect(decideMetadataDocument(url, [document])._tag).toBe("Refuse")
  })

  it("takes an https client_id with a path as a document's URL; http only when allowed", () => {
    expect(isMetadataDocumentUrl(url, false)).toBe(true)
    expect(isMetadataDocumentUrl("https://agent.example.com/", false)).toBe(false)
    expect(isMetadataDocumentUrl("https://agent.example.com/c#x", false)).toBe(false)
    expect(isMetadataDocumentUrl("http://127.0.0.1:4000/client.json", false)).toBe(false)
    expect(isMetadataDocumentUrl("http://127.0.0.1:4000/client.json", true)).toBe(true)
    expect(isMetadataDocumentUrl("wiki", true)).toBe(false)
  })
})
