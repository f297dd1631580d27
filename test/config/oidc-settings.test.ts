import { generateKeyPairSync } from "node:crypto"
import { describe, expect, it } from "@effect/vitest"
import { Either, Option, Redacted } from "effect"
import { parseSettings } from "../../config/Settings.js"

const base = { SERVICE_SECRET_KEY: "a-secret-key-of-at-least-32-bytes-long!" }
const settingsOf = (env: Record<string, string>) => {
  const result = parseSettings({ ...base, ...env })
  if (Either.isLeft(result)) throw new Error(result.left.join("\n"))
  return result.right.settings
}
const problems = (env: Record<string, string>) =>
  Either.getLeft(parseSettings({ ...base, ...env })).pipe(Option.getOrElse(() => []))

const pem = (key: ReturnType<typeof generateKeyPairSync>["privateKey"]) =>
  key.export({ format: "pem", type: "pkcs8" }).toString()
const rsa = pem(generateKeyPairSync("rsa", { modulusLength: 2048 }).privateKey)
const ec = pem(generateKeyPairSync("ec", { namedCurve: "P-256" }).privateKey)

describe("the OpenID Provider's settings", () => {
  it("is off by default, its issuer PUBLIC_URL without a trailing slash", () => {
    const { oidc } = settingsOf({ SERVICE_PUBLIC_URL: "https://auth.example.com/" })
    expect(oidc.providerEnabled).toBe(false)
    expect(oidc.issuer).toBe("https://auth.example.com")
    expect(oidc.codeTtlSeconds).toBe(60)
  })

  it("refuses to start the provider without an RSA key, in one line naming the setting", () => {
    const lines = problems({ SERVICE_OIDC_PROVIDER_ENABLED: "true" })
    expect(lines).toHaveLength(1)
    expect(lines[0]).toMatch(/SERVICE_OIDC_PROVIDER_ENABLED needs SERVICE_OIDC_PRIVATE_KEY/)
  })

  it("refuses a key that is not RSA, and never repeats the key", () => {
    const lines = problems({ SERVICE_OIDC_PROVIDER_ENABLED: "true", SERVICE_OIDC_PRIVATE_KEY: ec })
    expect(lines.join("\n")).toMatch(/SERVICE_OIDC_PRIVATE_KEY holds a P-256 EC key, not an RSA key/)
    expect(lines.join("\n")).not.toContain("BEGIN")
  })

  it("signs with the access tokens' key under JWT_ALGORITHM=RS256", () => {
    const { oidc, tokens } = settingsOf({
      SERVICE_OIDC_PROVIDER_ENABLED: "true",
      SERVICE_JWT_ALGORITHM: "RS256",
      SERVICE_JWT_PRIVATE_KEY: rsa
    })
    expect(Option.map(oidc.signingKey, Redacted.value)).toEqual(Option.map(tokens.jwtPrivateKey, Redacted.value))
  })

  it("takes its own RSA key, and refuses an issuer equal to JWT_ISSUER or with a query", () => {
    const on = { SERVICE_OIDC_PROVIDER_ENABLED: "true", SERVICE_OIDC_PRIVATE_KEY: rsa }
    expect(Option.isSome(settingsOf(on).oidc.signingKey)).toBe(true)
    expect(
      problems({ ...on, SERVICE_OIDC_ISSUER: "https://id.example.com", SERVICE_JWT_ISSUER: "https://id.example.com" })
    ).toEqual([expect.stringMatching(/SERVICE_OIDC_ISSUER equals SERVICE_JWT_ISSUER/)])
    expect(problems({ ...on, SERVICE_OIDC_ISSUER: "https://id.example.com/?tenant=1" })).toEqual([
      expect.stringMatching(/SERVICE_OIDC_ISSUER has a query or a fragment/)
    ])
  })

  it("takes LOGO_URL as an http(s) URL, and refuses another scheme naming the setting", () => {
    expect(
      Option.map(settingsOf({ SERVICE_LOGO_URL: "https://cdn.example.com/logo.svg" }).server.logoUrl, String)
    ).toEqual(Option.some("https://cdn.example.com/logo.svg"))
    expect(settingsOf({}).server.logoUrl).toEqual(Option.none())
    expect(problems({ SERVICE_LOGO_URL: "javascript:alert(1)" }).join("\n")).toMatch(/SERVICE_LOGO_URL/)
  })
})
