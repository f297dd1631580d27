import { Context, Data, type Effect } from "effect"

/** A metadata document that could not be had: unreachable, refused by the address guard, too big, not JSON. */
export class ClientDocumentError extends Data.TaggedError("ClientDocumentError")<{ readonly reason: string }> {}

/** A fetched document, and how long its server says it may be kept (Cache-Control max-age), if it says. */
export interface FetchedDocument {
  readonly document: unknown
  readonly maxAgeSeconds: number | undefined
}

/**
 * Client ID Metadata Documents (draft-ietf-oauth-client-id-metadata-document): the document at a
 * client_id's URL, fetched as the webhook deliverer reaches its receivers (no private address,
 * the address checked being the one connected to), bounded in time and size.
 */
export class ClientMetadataDocuments extends Context.Tag("app/ClientMetadataDocuments")<
  ClientMetadataDocuments,
  { readonly fetch: (url: string) => Effect.Effect<FetchedDocument, ClientDocumentError> }
>() {}
