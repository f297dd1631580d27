import { Context, type DateTime, type Effect, type Option } from "effect"
import type { Resource } from "../../domain/oidc/Resource.js"
import type { StoreUnavailableError } from "./StoreUnavailableError.js"

/** A resource as stored, with when it was added. */
export interface StoredResource extends Resource {
  readonly created_at: DateTime.Utc
}

/** The protected resources the provider issues tokens for (`portcullis resource …`, RFC 8707). */
export class OidcResources extends Context.Tag("app/OidcResources")<
  OidcResources,
  {
    /** Stores the resource; false, and nothing stored, when its URI is taken. */
    readonly add: (resource: StoredResource) => Effect.Effect<boolean, StoreUnavailableError>
    /** The resource of a normalised URI. */
    readonly find: (uri: string) => Effect.Effect<Option.Option<StoredResource>, StoreUnavailableError>
    /** Every resource, oldest first. */
    readonly all: Effect.Effect<ReadonlyArray<StoredResource>, StoreUnavailableError>
    /** Removes the resource; false when none had this URI. */
    readonly remove: (uri: string) => Effect.Effect<boolean, StoreUnavailableError>
  }
>() {}
