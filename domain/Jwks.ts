import { Schema } from "effect"

/** The public-key algorithms tokens may be signed with (JWT_ALGORITHM); the others are HMACs. */
export const AsymmetricAlgorithm = Schema.Literal("EdDSA", "ES256", "RS256")
export type AsymmetricAlgorithm = typeof AsymmetricAlgorithm.Type

/**
 * A public key as apps fetch it to verify tokens locally (RFC 7517): its `kid` (the RFC 7638
 * thumbprint), the one `alg` it signs with, and the members of its key type (OKP: crv, x;
 * EC: crv, x, y; RSA: n, e).
 */
export const PublicJwk = Schema.Struct({
  kty: Schema.Literal("OKP", "EC", "RSA"),
  kid: Schema.String,
  alg: AsymmetricAlgorithm,
  use: Schema.Literal("sig"),
  crv: Schema.optional(Schema.String),
  x: Schema.optional(Schema.String),
  y: Schema.optional(Schema.String),
  n: Schema.optional(Schema.String),
  e: Schema.optional(Schema.String)
}).annotations({ identifier: "PublicJwk" })
export type PublicJwk = typeof PublicJwk.Type

/** The keys tokens are verified with: the signing key's public half first, then the earlier ones. */
export const JsonWebKeySet = Schema.Struct({ keys: Schema.Array(PublicJwk) }).annotations({
  identifier: "JsonWebKeySet",
  examples: [
    {
      keys: [
        {
          kty: "OKP",
          kid: "kPrK_qmxVWaYVA9wwBF6Iuo3vVzz7TxHCTwXBygrS4k",
          alg: "EdDSA",
          use: "sig",
          crv: "Ed25519",
          x: "11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo"
        }
      ]
    }
  ]
})
export type JsonWebKeySet = typeof JsonWebKeySet.Type
