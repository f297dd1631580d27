import { Effect, Layer, Option, Redacted } from "effect"
import { OidcPolicy } from "../application/oidc/OidcPolicy.js"
import type { ClientMetadataDocuments } from "../application/ports/ClientMetadataDocuments.js"
import { ProviderTokens } from "../application/ports/ProviderTokens.js"
import { PublishedKeys } from "../application/ports/PublishedKeys.js"
import type { Settings } from "../config/Settings.js"
import * as ClientMetadataDocumentsHttp from "../infrastructure/oidc/ClientMetadataDocumentsHttp.js"
import { imported } from "./imported.js"

/** The provider's rules from the settings: its issuer, and lifetimes as Portcullis's own tokens have them. */
export const oidcPolicy = ({ oidc, tokens }: Settings) =>
  OidcPolicy.of({
    issuer: oidc.issuer,
    codeTtlSeconds: oidc.codeTtlSeconds,
    metadataDocuments: { enabled: oidc.clientMetadataDocuments, allowHttp: oidc.clientMetadataAllowPrivate },
    // As long as a mailed sign-in link, so that a link asked from the sign-in page still resumes it.
    requestTtlSeconds: tokens.emailSignInExpireMinutes * 60,
    lifetimes: {
      accessSeconds: tokens.accessTokenExpireMinutes * 60,
      refreshSeconds: tokens.refreshTokenExpireDays * 86_400,
      idTokenSeconds: tokens.accessTokenExpireMinutes * 60
    }
  })

const off = Effect.dieMessage("the OpenID Provider is off (OIDC_PROVIDER_ENABLED=false): no route uses its tokens")

/**
 * The provider's tokens while it is off: its routes are not served, so nothing reaches these; a
 * use that did would be a wiring fault, never a token signed with no key.
 */
const providerOff = Layer.succeed(
  ProviderTokens,
  ProviderTokens.of({
    issuer: "",
    accessToken: () => off,
    idToken: () => off,
    verifyAccessToken: () => off,
    verifyIdTokenHint: () => off
  })
)

/**
 * The OpenID Provider's ports when OIDC_PROVIDER_ENABLED: its policy, its tokens signed with its
 * RSA key, and that key's public half added to the published JWKS (once: under JWT_ALGORITHM=RS256
 * it is the access tokens' key, published already). Nothing when the provider is off.
 */
export const providerPorts = (
  settings: Settings
): Layer.Layer<ProviderTokens | OidcPolicy | ClientMetadataDocuments, never, PublishedKeys> =>
  Layer.merge(tokenPorts(settings), ClientMetadataDocumentsHttp.layer(settings.oidc.clientMetadataAllowPrivate))

const tokenPorts = (settings: Settings): Layer.Layer<ProviderTokens | OidcPolicy, never, PublishedKeys> =>
  Option.match(settings.oidc.providerEnabled ? settings.oidc.signingKey : Option.none(), {
    onNone: () => Layer.merge(providerOff, Layer.succeed(OidcPolicy, oidcPolicy(settings))),
    onSome: (redacted) =>
      imported(
        () =>
          Promise.all([
            import("../infrastructure/crypto/ProviderTokensJose.js"),
            import("../infrastructure/crypto/TokenSignerAsymmetric.js")
          ]),
        ([ProviderTokensJose, { publicJwk }]) =>
          Layer.unwrapEffect(
            Effect.gen(function* () {
              const key = Redacted.value(redacted)
              const jwk = yield* publicJwk(key)
              const published = Layer.effect(
                PublishedKeys,
                Effect.map(PublishedKeys, ({ jwks }) =>
                  PublishedKeys.of({
                    jwks: { keys: jwks.keys.some((held) => held.kid === jwk.kid) ? jwks.keys : [...jwks.keys, jwk] }
                  })
                )
              )
              return Layer.mergeAll(
                published,
                ProviderTokensJose.layer(settings.oidc.issuer, { key: key.key, kid: jwk.kid }),
                Layer.succeed(OidcPolicy, oidcPolicy(settings))
              )
            })
          )
      )
  })
