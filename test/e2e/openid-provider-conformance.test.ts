import { describe, expect, it } from "@effect/vitest"
import * as oidc from "openid-client"
import { redirectUri } from "../support/openidProvider.js"
import { configOf, type ProviderUnderTest, providersUnderTest } from "../support/providersUnderTest.js"

/**
 * The OpenID Foundation's Basic OP and Config OP test plans, rewritten as black-box cases
 * (docs/integrating.md lists each plan item beside the case that covers it). Every case runs
 * against Portcullis and against oidc-provider, the certified Node provider, configured alike:
 * a case that only Portcullis passed would be testing Portcullis's own reading of the plan.
 */

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

/** An authorization URL for `config`, with PKCE, nonce and state, and the checks its answer takes. */
const request = async (config: oidc.Configuration, parameters: Record<string, string> = {}) => {
  const verifier = oidc.randomPKCECodeVerifier()
  const nonce = oidc.randomNonce()
  const state = oidc.randomState()
  const url = oidc.buildAuthorizationUrl(config, {
    redirect_uri: redirectUri,
    scope: "openid",
    code_challenge: await oidc.calculatePKCECodeChallenge(verifier),
    code_challenge_method: "S256",
    nonce,
    state,
    ...parameters
  })
  return { url, checks: { pkceCodeVerifier: verifier, expectedNonce: nonce, expectedState: state } }
}

for (const make of providersUnderTest()) {
  const op: ProviderUnderTest = make()
  describe(`the OIDF Basic and Config OP plans, rewritten (${op.name})`, () => {
    it("oidcc-server, oidcc-client-secret-basic: code flow, the ID token checked by openid-client", async () => {
      const config = await configOf(op, "basic")
      const { url, checks } = await request(config)
      const { callback } = await op.browser().authorize(url, await op.user())
      const tokens = await oidc.authorizationCodeGrant(config, callback, checks)
      const claims = tokens.claims()
      expect(claims?.iss).toBe(op.issuer())
      expect(claims?.aud).toBe(op.basic.id)
      expect(typeof claims?.auth_time === "number" || claims?.auth_time === undefined).toBe(true)
    })

    it("oidcc-client-secret-post: the client authenticates in the form", async () => {
      const config = await configOf(op, "post")
      const { url, checks } = await request(config)
      const { callback } = await op.browser().authorize(url, await op.user())
      const tokens = await oidc.authorizationCodeGrant(config, callback, checks)
      expect(tokens.claims()?.sub).toEqual(expect.any(String))
    })

    it("oidcc-response-type-missing: no code is issued, the error is told", async () => {
      const config = await configOf(op, "basic")
      const { url } = await request(config)
      url.searchParams.delete("response_type")
      const answer = await op.browser().first(url)
      if (answer.location === undefined) expect(answer.status).toBe(400)
      else {
        expect(answer.location.searchParams.get("code")).toBeNull()
        expect(answer.location.searchParams.get("error")).toMatch(/^(invalid_request|unsupported_response_type)$/)
      }
    })

    it("oidcc-scope-email and openid alone: the email claims come with the email scope only", async () => {
      const config = await configOf(op, "basic")
      const user = await op.user()
      const browser = op.browser()
      const withEmail = await request(config, { scope: "openid email" })
      const first = await oidc.authorizationCodeGrant(
        config,
        (await browser.authorize(withEmail.url, user)).callback,
        withEmail.checks
      )
      const sub = first.claims()?.sub ?? ""
      const info = await oidc.fetchUserInfo(config, first.access_token, sub)
      expect(info.email).toBe(user.login)
      expect(info.email_verified).toEqual(expect.any(Boolean))
      const bare = await request(config, { scope: "openid" })
      const second = await oidc.authorizationCodeGrant(
        config,
        (await browser.authorize(bare.url, user)).callback,
        bare.checks
      )
      expect((await oidc.fetchUserInfo(config, second.access_token, sub)).email).toBeUndefined()
    })

    it("oidcc-prompt-none-not-logged-in: login_required back at the redirect URI, with state", async () => {
      const config = await configOf(op, "basic")
      const { url } = await request(config, { prompt: "none", state: "none-out" })
      const { location } = await op.browser().first(url)
      expect(location?.searchParams.get("error")).toBe("login_required")
      expect(location?.searchParams.get("state")).toBe("none-out")
    })

    it("oidcc-prompt-none-logged-in: a code without any interaction", async () => {
      const config = await configOf(op, "basic")
      const browser = op.browser()
      const user = await op.user()
      const first = await request(config)
      await browser.authorize(first.url, user)
      const again = await request(config, { prompt: "none" })
      const { location } = await browser.first(again.url)
      expect(location?.searchParams.get("code")).toEqual(expect.any(String))
      const tokens = await oidc.authorizationCodeGrant(config, location as URL, again.checks)
      expect(tokens.claims()?.sub).toEqual(expect.any(String))
    })

    it("oidcc-prompt-login: a signed-in browser signs in again", async () => {
      const config = await configOf(op, "basic")
      const browser = op.browser()
      const user = await op.user()
      await browser.authorize((await request(config)).url, user)
      const again = await request(config, { prompt: "login" })
      const { prompts } = await browser.authorize(again.url, user)
      expect(prompts).toContain("login")
    })

    it("oidcc-max-age-1: a sign-in older than a second is made again; auth_time says when", async () => {
      const config = await configOf(op, "basic")
      const browser = op.browser()
      const user = await op.user()
      await browser.authorize((await request(config)).url, user)
      await pause(2_100)
      const again = await request(config, { max_age: "1" })
      const { callback, prompts } = await browser.authorize(again.url, user)
      expect(prompts).toContain("login")
      const tokens = await oidc.authorizationCodeGrant(config, callback, { ...again.checks, maxAge: 1 })
      expect(tokens.claims()?.auth_time).toEqual(expect.any(Number))
    }, 20_000)

    it("oidcc-unknown-parameters: parameters it does not know are ignored", async () => {
      const config = await configOf(op, "basic")
      const { url, checks } = await request(config, { extra: "foobar", vendor_flag: "1" })
      const { callback } = await op.browser().authorize(url, await op.user())
      expect((await oidc.authorizationCodeGrant(config, callback, checks)).access_token).toEqual(expect.any(String))
    })

    it("oidcc-codereuse: a code used twice is refused, and the tokens of its first use stop working", async () => {
      const config = await configOf(op, "basic")
      const { url, checks } = await request(config)
      const { callback } = await op.browser().authorize(url, await op.user())
      const tokens = await oidc.authorizationCodeGrant(config, callback, checks)
      await expect(oidc.authorizationCodeGrant(config, callback, checks)).rejects.toMatchObject({
        error: "invalid_grant"
      })
      const introspected = await fetch(config.serverMetadata().userinfo_endpoint ?? "", {
        headers: { authorization: `Bearer ${tokens.access_token}` }
      })
      expect(introspected.status).toBe(401)
    })

    it("oidcc-ensure-registered-redirect-uri: an unregistered redirect URI is never redirected to", async () => {
      const config = await configOf(op, "basic")
      const { url } = await request(config, { redirect_uri: "https://attacker.example/cb" })
      const answer = await op.browser().first(url)
      expect(answer.location).toBeUndefined()
      expect(answer.status).toBe(400)
    })

    it("oidcc-discovery (Config OP): the document is consistent with what is served", async () => {
      const config = await configOf(op, "basic")
      const metadata = config.serverMetadata()
      expect(metadata.issuer).toBe(op.issuer())
      expect(metadata.response_types_supported).toContain("code")
      expect(metadata.subject_types_supported).toContain("public")
      expect(metadata.id_token_signing_alg_values_supported).toContain("RS256")
      expect(metadata.scopes_supported).toContain("openid")
      expect(metadata.code_challenge_methods_supported).toContain("S256")
      const jwks = (await (await fetch(metadata.jwks_uri ?? "")).json()) as {
        keys: Array<{ kty: string; kid?: string }>
      }
      expect(jwks.keys.some((key) => key.kty === "RSA" && typeof key.kid === "string")).toBe(true)
      for (const endpoint of [metadata.authorization_endpoint, metadata.token_endpoint, metadata.userinfo_endpoint]) {
        expect(new URL(endpoint ?? "").origin).toBe(new URL(op.issuer()).origin)
      }
    })
  })
}
