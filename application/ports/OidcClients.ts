import { Context, type DateTime, type Effect, type Option } from "effect"
import type { Client } from "../../domain/oidc/Client.js"
import type { StoreUnavailableError } from "./StoreUnavailableError.js"

/** A client as stored, with when it was added. */
export interface StoredClient extends Client {
  readonly created_at: DateTime.Utc
  /** A client named by its metadata document's URL: when its copy must be fetched again. */
  readonly metadata_expires_at?: DateTime.Utc | null
}

/** The OpenID Provider's clients, kept in the database (`portcullis client …`). */
export class OidcClients extends Context.Tag("app/OidcClients")<
  OidcClients,
  {
    /** Stores the client; false, and nothing stored, when its client_id is taken. */
    readonly add: (client: StoredClient) => Effect.Effect<boolean, StoreUnavailableError>
    /** Stores a metadata document's client, or replaces its stored copy (the document changed). */
    readonly putDocumentClient: (client: StoredClient) => Effect.Effect<void, StoreUnavailableError>
    readonly find: (clientId: string) => Effect.Effect<Option.Option<StoredClient>, StoreUnavailableError>
    /** Every client, oldest first. */
    readonly all: Effect.Effect<ReadonlyArray<StoredClient>, StoreUnavailableError>
    /** Removes the client; false when none had this id. */
    readonly remove: (clientId: string) => Effect.Effect<boolean, StoreUnavailableError>
    /**
     * Removes at most `limit` self-registered clients idle since `since`: added before it, and no
     * grant of theirs used since; answers how many.
     */
    readonly deleteIdle: (since: DateTime.Utc, limit: number) => Effect.Effect<number, StoreUnavailableError>
    readonly countIdle: (since: DateTime.Utc) => Effect.Effect<number, StoreUnavailableError>
    /** Replaces a confidential client's secret digest; false when no confidential client had this id. */
    readonly replaceSecret: (clientId: string, secretDigest: string) => Effect.Effect<boolean, StoreUnavailableError>
  }
>() {}
