import { describe, expect, it } from "vitest"
import {
  audienceOf,
  decideRequestedResources,
  narrowResources,
  normaliseResourceUri,
  ResourceDecision
} from "../../domain/oidc/Resource.js"

describe("resource indicators (RFC 8707)", () => {
  it("compares URIs normalised: scheme and host lower-cased, default port dropped, one trailing slash ignored", () => {
    expect(normaliseResourceUri("HTTPS://API.Example.com:443/mcp/")).toBe("https://api.example.com/mcp")
    expect(normaliseResourceUri("https://api.example.com/")).toBe("https://api.example.com")
    expect(normaliseResourceUri("https://api.example.com")).toBe("https://api.example.com")
    expect(normaliseResourceUri("http://127.0.0.1:80/x")).toBe("http://127.0.0.1/x")
    expect(normaliseResourceUri("http://localhost:3000/mcp")).toBe("http://localhost:3000/mcp")
    // The path keeps its case, and its query.
    expect(normaliseResourceUri("https://api.example.com/MCP?tenant=a")).toBe("https://api.example.com/MCP?tenant=a")
    // Only one trailing slash is ignored.
    expect(normaliseResourceUri("https://api.example.com/mcp//")).toBe("https://api.example.com/mcp/")
  })

  it("is no resource indicator unless an absolute http(s) URI without a fragment or credentials", () => {
    for (const raw of [
      "api.example.com",
      "/mcp",
      "https://api.example.com/mcp#x",
      "https://api.example.com/#",
      "urn:example:api",
      "ftp://api.example.com",
      "https://user:pw@api.example.com/",
      "https://",
      ""
    ]) {
      expect(normaliseResourceUri(raw), raw).toBeUndefined()
    }
  })

  const registered = new Set(["https://api.example.com/mcp", "https://reports.example.com"])
  const isRegistered = (uri: string) => registered.has(uri)

  it("takes the registered resources an authorization names, once each; none named is none", () => {
    expect(decideRequestedResources([], isRegistered)).toEqual(ResourceDecision.Resources({ uris: [] }))
    expect(
      decideRequestedResources(
        ["https://API.example.com/mcp/", "https://reports.example.com/", "https://api.example.com/mcp"],
        isRegistered
      )
    ).toEqual(ResourceDecision.Resources({ uris: ["https://api.example.com/mcp", "https://reports.example.com"] }))
  })

  it("refuses an unregistered or malformed resource with invalid_target", () => {
    expect(decideRequestedResources(["https://evil.example.com/mcp"], isRegistered)._tag).toBe("InvalidTarget")
    expect(decideRequestedResources(["https://api.example.com/mcp#frag"], isRegistered)._tag).toBe("InvalidTarget")
    expect(decideRequestedResources(["https://api.example.com/mcp", "nope"], isRegistered)._tag).toBe("InvalidTarget")
  })

  it("lets a token request narrow the grant's resources, never widen them", () => {
    const granted = ["https://api.example.com/mcp", "https://reports.example.com"]
    expect(narrowResources([], granted)).toEqual(ResourceDecision.Resources({ uris: granted }))
    expect(narrowResources(["https://reports.example.com/"], granted)).toEqual(
      ResourceDecision.Resources({ uris: ["https://reports.example.com"] })
    )
    expect(narrowResources(["https://other.example.com"], granted)._tag).toBe("InvalidTarget")
    expect(narrowResources(["https://api.example.com/mcp"], [])._tag).toBe("InvalidTarget")
  })

  it("makes the access token's aud the resource, the resources, or else the client", () => {
    expect(audienceOf([], "wiki")).toBe("wiki")
    expect(audienceOf(["https://api.example.com/mcp"], "wiki")).toBe("https://api.example.com/mcp")
    expect(audienceOf(["https://a.example", "https://b.example"], "wiki")).toEqual([
      "https://a.example",
      "https://b.example"
    ])
  })
})
