import { Context } from "effect"
import type { JsonWebKeySet } from "../../domain/Jwks.js"

/**
 * The public keys that verify the tokens this service signs, for apps that verify them locally.
 * Empty when tokens are signed with SECRET_KEY: a shared secret is never published.
 */
export class PublishedKeys extends Context.Tag("app/PublishedKeys")<
  PublishedKeys,
  { readonly jwks: JsonWebKeySet }
>() {}
