import { describe, expect, it } from "@effect/vitest"
import { Either, Option } from "effect"
import { type CustomOAuthProvider, oauthProviders } from "../../config/oauthProviders.js"
import { parseSettings } from "../../config/Settings.js"

const settings = Either.getOrThrow(
  parseSettings({ SERVICE_SECRET_KEY: "test-secret-key-with-at-least-32-bytes!", SERVICE_DATABASE_URL: "memory:" })
).settings

const corp: CustomOAuthProvider = {
  name: "corp",
  authorization_endpoint: "https://sso.corp.test/authorize",
  token_endpoint: "https://sso.corp.test/token",
  userinfo_endpoint: "https://sso.corp.test/userinfo",
  client_id: "corp-id",
  client_secret: "corp-secret",
  redirect_uris: ["https://app.example.com/oauth/corp"]
}

describe("OAuth providers added in code", () => {
  it("use PKCE unless they say pkce: false", () => {
    const registered = oauthProviders(settings, {
      oauthProviders: [corp, { ...corp, name: "loose", pkce: false }, { ...corp, name: "strict", pkce: true }]
    })
    expect(registered.map((provider) => [provider.name, Option.getOrNull(provider.pkce)])).toEqual([
      ["corp", true],
      ["loose", false],
      ["strict", true]
    ])
  })
})
