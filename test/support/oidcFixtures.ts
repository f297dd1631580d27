import { DateTime, Effect, Option } from "effect"
import { OidcClients, type StoredClient } from "../../application/ports/OidcClients.js"
import { UserRepo } from "../../application/ports/UserRepo.js"
import { ClientId } from "../../domain/oidc/Client.js"
import type { Email } from "../../domain/User.js"

/** A confidential client of the provider, redirecting to https://app.example.com/cb, as stored. */
export const clientOf = (id: string, overrides: Partial<StoredClient> = {}): StoredClient => ({
  client_id: ClientId.make(id),
  name: id,
  public: false,
  first_party: false,
  self_registered: false,
  redirect_uris: ["https://app.example.com/cb"],
  post_logout_redirect_uris: [],
  scopes: [],
  grants: ["authorization_code"],
  secret_digest: "a".repeat(64),
  created_at: DateTime.unsafeMake("2026-12-01T12:00:00Z"),
  ...overrides
})

/** Stores `clientOf(id, overrides)`. */
export const addClient = (id: string, overrides: Partial<StoredClient> = {}) =>
  Effect.flatMap(OidcClients, (clients) => clients.add(clientOf(id, overrides)))

/** An active, verified user without a password; answers its id. */
export const addUser = (email: string) =>
  Effect.flatMap(UserRepo, (users) =>
    Effect.map(
      users.create({
        email: email as Email,
        hashed_password: Option.none(),
        is_active: true,
        is_verified: true,
        is_superuser: false
      }),
      (user): string => user.id
    )
  )
