import * as HttpApiEndpoint from "@effect/platform/HttpApiEndpoint"
import * as HttpApiGroup from "@effect/platform/HttpApiGroup"
import * as OpenApi from "@effect/platform/OpenApi"
import { JsonWebKeySet } from "../../../../domain/Jwks.js"
import { type ApiShape, placed } from "../../Api.js"

/** The public keys of an asymmetric JWT_ALGORITHM, for apps that verify access tokens themselves. */
export const jwksGroup = (shape: ApiShape) =>
  placed(
    {
      prefix: shape.authPrefix,
      title: "Keys",
      description: "The public keys that verify the tokens this service signs (EdDSA, ES256 or RS256)."
    },
    HttpApiGroup.make("jwks").add(
      HttpApiEndpoint.get("jwks", "/.well-known/jwks.json")
        .annotate(OpenApi.Summary, "The public signing keys (JWKS)")
        .annotate(
          OpenApi.Description,
          "The signing key and the earlier keys still accepted, each with its kid (RFC 7638 thumbprint), alg and use sig. Cacheable for 5 minutes. Not served with an HMAC algorithm (404)."
        )
        .addSuccess(JsonWebKeySet)
    )
  )
