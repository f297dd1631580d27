import { HttpApiEndpoint, HttpApiGroup, HttpServerResponse, OpenApi } from "@effect/platform"
import { Effect } from "effect"
import { PublishedKeys } from "../../../application/ports/PublishedKeys.js"
import { isAsymmetric } from "../../../config/sections/tokens.js"
import { JsonWebKeySet } from "../../../domain/Jwks.js"
import { featureApi } from "../Api.js"
import { feature } from "../Feature.js"

/** Apps fetch the keys once and again when a token names an unknown `kid` (a rotation): five minutes keeps that cheap. */
const cacheControl = "public, max-age=300"

/**
 * The public keys of an asymmetric JWT_ALGORITHM as a JWK Set, for apps that verify access
 * tokens themselves. Not served with an HMAC algorithm (404): its key is the shared secret.
 */
export const jwks = feature({
  name: "jwks",
  limits: [],
  enabled: (settings) => isAsymmetric(settings.tokens.jwtAlgorithm),
  api: ({ settings }) =>
    featureApi(
      {
        prefix: settings.server.authPrefix,
        title: "Keys",
        description: "The public keys that verify the tokens this service signs (EdDSA, ES256 or RS256)."
      },
      HttpApiGroup.make("jwks").add(
        HttpApiEndpoint.get("jwks", "/.well-known/jwks.json")
          .addSuccess(JsonWebKeySet)
          .annotate(
            OpenApi.Description,
            "The signing key and the earlier keys still accepted, each with its kid (RFC 7638 thumbprint), alg and use sig. Cacheable for 5 minutes."
          )
      ),
      (handlers) =>
        Effect.map(PublishedKeys, ({ jwks: keys }) => {
          const response = HttpServerResponse.unsafeJson(keys, { headers: { "cache-control": cacheControl } })
          return handlers.handle("jwks", () => Effect.succeed(response))
        })
    )
})
