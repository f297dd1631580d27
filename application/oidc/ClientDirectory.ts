import { DateTime, Effect, Either, Option } from "effect"
import { ClientId } from "../../domain/oidc/Client.js"
import { decideMetadataDocument, isMetadataDocumentUrl } from "../../domain/oidc/Registration.js"
import { ClientMetadataDocuments } from "../ports/ClientMetadataDocuments.js"
import { OidcClients, type StoredClient } from "../ports/OidcClients.js"
import { OidcPolicy } from "./OidcPolicy.js"

/** How long a metadata document's copy is kept, whatever its server says (the draft's bounds). */
const KEEP_AT_LEAST_SECONDS = 300
const KEEP_AT_MOST_SECONDS = 86_400

/** Counts a document's fetch against whoever asked for it: false when their limit is spent. */
export type FetchCounter = Effect.Effect<boolean>

/** Why the client named by a metadata document's URL cannot be had. */
export interface DocumentRefusal {
  readonly reason: string
}

/**
 * The client an authorization request names: a stored one, or, with OIDC_CLIENT_METADATA_DOCUMENTS
 * and a client_id that is a URL, the client its metadata document describes, fetched when no copy
 * is kept or the copy is older than its server allowed (5 minutes to 24 hours), and kept as a
 * public, self-registered client (its codes and grants need a row). A document that cannot be
 * had, or does not describe such a client, is a refusal: a stale copy is never used instead.
 */
export class ClientDirectory extends Effect.Service<ClientDirectory>()("app/ClientDirectory", {
  effect: Effect.gen(function* () {
    const clients = yield* OidcClients
    const documents = yield* ClientMetadataDocuments
    const { metadataDocuments } = yield* OidcPolicy

    const fetched = (url: string, stored: StoredClient | undefined, counted: FetchCounter) =>
      Effect.gen(function* () {
        if (!(yield* counted))
          return Either.left<DocumentRefusal>({
            reason: "too many documents fetched for this address; try again later"
          })
        const answer = yield* Effect.either(documents.fetch(url))
        if (Either.isLeft(answer)) return Either.left<DocumentRefusal>({ reason: answer.left.reason })
        const decision = decideMetadataDocument(url, answer.right.document)
        if (decision._tag === "Refuse") return Either.left<DocumentRefusal>({ reason: decision.error_description })
        const now = yield* DateTime.now
        const keep = Math.min(
          KEEP_AT_MOST_SECONDS,
          Math.max(KEEP_AT_LEAST_SECONDS, answer.right.maxAgeSeconds ?? KEEP_AT_LEAST_SECONDS)
        )
        const client: StoredClient = {
          client_id: stored?.client_id ?? ClientId.make(url),
          name: decision.registration.name,
          public: true,
          first_party: false,
          self_registered: true,
          redirect_uris: decision.registration.redirect_uris,
          post_logout_redirect_uris: decision.registration.post_logout_redirect_uris,
          scopes: [],
          grants: ["authorization_code"],
          secret_digest: null,
          created_at: stored?.created_at ?? now,
          metadata_expires_at: DateTime.add(now, { seconds: keep })
        }
        yield* clients.putDocumentClient(client)
        return Either.right<StoredClient | undefined>(client)
      })

    /**
     * The client of `clientId`, none when no client has it, or why its metadata document refused
     * it. `counted` counts a fetch against the requester (bucket oidc_register) and says whether
     * it may be made.
     */
    const named = (clientId: string, counted: FetchCounter = Effect.succeed(true)) =>
      Effect.gen(function* () {
        const stored = Option.getOrUndefined(yield* clients.find(clientId))
        const isDocument =
          metadataDocuments.enabled &&
          isMetadataDocumentUrl(clientId, metadataDocuments.allowHttp) &&
          (stored === undefined || stored.metadata_expires_at != null)
        if (!isDocument) return Either.right<StoredClient | undefined>(stored)
        const fresh =
          stored?.metadata_expires_at != null && DateTime.lessThan(yield* DateTime.now, stored.metadata_expires_at)
        return fresh ? Either.right<StoredClient | undefined>(stored) : yield* fetched(clientId, stored, counted)
      })

    return { named } as const
  })
}) {}
