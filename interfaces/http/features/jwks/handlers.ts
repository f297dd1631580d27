import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import { Effect } from "effect"
import { PublishedKeys } from "../../../../application/ports/PublishedKeys.js"
import { isAsymmetric } from "../../../../config/sections/tokens.js"
import { feature, featureApi, shapeOf } from "../../Feature.js"
import { jwksGroup } from "./group.js"

/** Apps fetch the keys once and again when a token names an unknown `kid` (a rotation): five minutes keeps that cheap. */
const cacheControl = "public, max-age=300"

/**
 * The jwks group's handler; not served with an HMAC algorithm (404), whose key is the shared
 * secret, unless the OpenID Provider publishes its own key.
 */
export const jwks = feature({
  name: "jwks",
  limits: [],
  enabled: (settings) => isAsymmetric(settings.tokens.jwtAlgorithm) || settings.oidc.providerEnabled,
  api: (context) =>
    featureApi(jwksGroup(shapeOf(context)), (handlers) =>
      Effect.map(PublishedKeys, ({ jwks: keys }) => {
        const response = HttpServerResponse.unsafeJson(keys, { headers: { "cache-control": cacheControl } })
        return handlers.handle("jwks", () => Effect.succeed(response))
      })
    )
})
