import { Data, DateTime, Effect } from "effect"
import { ClientId } from "../../domain/oidc/Client.js"
import { decideRegistration } from "../../domain/oidc/Registration.js"
import { Audit } from "../Audit.js"
import { Cryptography } from "../ports/Cryptography.js"
import { OidcClients, type StoredClient } from "../ports/OidcClients.js"
import { Transaction } from "../ports/Transaction.js"

/** A registration refused (RFC 7591 §3.2.2), in OAuth's shape. */
export class RegistrationRefusal extends Data.TaggedError("RegistrationRefusal")<{
  readonly error: "invalid_redirect_uri" | "invalid_client_metadata"
  readonly error_description: string
}> {}

/** The client as registered (RFC 7591 §3.2.1): public, so no secret. */
export interface RegisteredClient {
  readonly client_id: string
  readonly client_id_issued_at: number
  readonly client_name: string
  readonly redirect_uris: ReadonlyArray<string>
  readonly post_logout_redirect_uris: ReadonlyArray<string>
  readonly grant_types: ReadonlyArray<string>
  readonly response_types: ReadonlyArray<string>
  readonly token_endpoint_auth_method: "none"
}

/**
 * Dynamic client registration (RFC 7591, OIDC_DYNAMIC_REGISTRATION): an app or an agent registers
 * itself as a public client under the domain's policy; it is marked self-registered, so that its
 * consent page says nobody checked who runs it, and it is audited as `client add` is.
 */
export class ClientRegistration extends Effect.Service<ClientRegistration>()("app/ClientRegistration", {
  effect: Effect.gen(function* () {
    const clients = yield* OidcClients
    const crypto = yield* Cryptography
    const audit = yield* Audit
    const tx = yield* Transaction

    const register = (metadata: unknown) =>
      Effect.gen(function* () {
        const decision = decideRegistration(metadata)
        if (decision._tag === "Refuse")
          return yield* new RegistrationRefusal({
            error: decision.error,
            error_description: decision.error_description
          })
        const { registration } = decision
        const client: StoredClient = {
          client_id: ClientId.make((yield* crypto.randomSecret).slice(0, 22)),
          name: registration.name,
          public: true,
          first_party: false,
          self_registered: true,
          redirect_uris: registration.redirect_uris,
          post_logout_redirect_uris: registration.post_logout_redirect_uris,
          scopes: [],
          grants: ["authorization_code"],
          secret_digest: null,
          created_at: yield* DateTime.now
        }
        yield* tx.transaction(
          Effect.gen(function* () {
            yield* clients.add(client)
            yield* audit.append({
              type: "oidc.client_added",
              user_id: null,
              details: { client_id: client.client_id, name: client.name, public: true, self_registered: true }
            })
          })
        )
        return {
          client_id: client.client_id,
          client_id_issued_at: Math.floor(DateTime.toEpochMillis(client.created_at) / 1000),
          client_name: client.name,
          redirect_uris: client.redirect_uris,
          post_logout_redirect_uris: client.post_logout_redirect_uris,
          grant_types: ["authorization_code", "refresh_token"],
          response_types: ["code"],
          token_endpoint_auth_method: "none"
        } satisfies RegisteredClient
      })

    return { register } as const
  })
}) {}
