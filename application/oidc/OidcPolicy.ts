import { Context } from "effect"

/** What the provider's flow is configured with (OIDC_ settings). */
export class OidcPolicy extends Context.Tag("app/OidcPolicy")<
  OidcPolicy,
  {
    /** The issuer, as every response names it (`iss`, RFC 9207). */
    readonly issuer: string
    readonly codeTtlSeconds: number
    /** OIDC_CLIENT_METADATA_DOCUMENTS, and whether http and private addresses are allowed for them. */
    readonly metadataDocuments: { readonly enabled: boolean; readonly allowHttp: boolean }
    /** How long a request waits for its sign-in or consent: as long as a mailed sign-in link. */
    readonly requestTtlSeconds: number
    /** How long the provider's tokens live: access tokens as Portcullis's own, refresh tokens as its sessions. */
    readonly lifetimes: {
      readonly accessSeconds: number
      readonly refreshSeconds: number
      readonly idTokenSeconds: number
    }
  }
>() {}
