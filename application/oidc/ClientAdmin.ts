import { Data, DateTime, Effect, Option } from "effect"
import { standardScopes } from "../../domain/oidc/Authorization.js"
import { type ClientGrant, ClientId, redirectUriProblem } from "../../domain/oidc/Client.js"
import { Audit } from "../Audit.js"
import { Cryptography } from "../ports/Cryptography.js"
import { OidcClients, type StoredClient } from "../ports/OidcClients.js"
import { Transaction } from "../ports/Transaction.js"

/** Why an operator's request about a client was refused, in a sentence for the terminal. */
export class ClientAdminRefusal extends Data.TaggedError("ClientAdminRefusal")<{ readonly reason: string }> {}

/** A client as an operator sees it: never its secret, only whether it has one. */
export interface ClientView {
  readonly client_id: string
  readonly name: string
  readonly public: boolean
  readonly first_party: boolean
  readonly self_registered: boolean
  readonly token_endpoint_auth_method: "client_secret_basic" | "none"
  readonly redirect_uris: ReadonlyArray<string>
  readonly post_logout_redirect_uris: ReadonlyArray<string>
  readonly scopes: ReadonlyArray<string>
  readonly grants: ReadonlyArray<ClientGrant>
  readonly created_at: DateTime.Utc
}

export const viewOf = (client: StoredClient): ClientView => ({
  client_id: client.client_id,
  name: client.name,
  public: client.public,
  first_party: client.first_party,
  self_registered: client.self_registered,
  token_endpoint_auth_method: client.public ? "none" : "client_secret_basic",
  redirect_uris: client.redirect_uris,
  post_logout_redirect_uris: client.post_logout_redirect_uris,
  scopes: client.scopes,
  grants: client.grants,
  created_at: client.created_at
})

/** What `client add` asks for. */
export interface NewClient {
  readonly name: string
  readonly redirect_uris: ReadonlyArray<string>
  readonly post_logout_redirect_uris: ReadonlyArray<string>
  readonly public: boolean
  readonly first_party: boolean
  readonly scopes: ReadonlyArray<string>
  readonly client_credentials: boolean
}

/** A scope of the client's own: printable ASCII without space, quote or backslash (RFC 6749 §3.3). */
export const isScopeToken = (scope: string) => /^[\x21\x23-\x5B\x5D-\x7E]{1,100}$/.test(scope)

/** Why a new client cannot be stored as asked, or undefined when it can. */
const problemOf = (client: NewClient): string | undefined => {
  const name = client.name.trim()
  if (name === "" || name.length > 100) return "--name must be 1 to 100 characters"
  // biome-ignore lint/suspicious/noControlCharactersInRegex: refusing control characters is the point
  if (/[\u0000-\u001F\u007F-\u009F]/.test(name)) return "--name must not contain control characters"
  if (client.redirect_uris.length === 0 && !client.client_credentials)
    return "a client signing users in needs at least one --redirect-uri"
  for (const [option, uris] of [
    ["--redirect-uri", client.redirect_uris],
    ["--post-logout-redirect-uri", client.post_logout_redirect_uris]
  ] as const) {
    for (const uri of uris) {
      const problem = redirectUriProblem(uri)
      if (problem !== undefined) return `${option} ${JSON.stringify(uri)} ${problem}`
    }
  }
  for (const scope of client.scopes) {
    if (!isScopeToken(scope))
      return `--scope ${JSON.stringify(scope)} is not a scope (no spaces, quotes or backslashes)`
    if ((standardScopes as ReadonlyArray<string>).includes(scope))
      return `--scope ${scope} is a standard scope, which every client may ask for already`
  }
  if (client.public && client.client_credentials)
    return "a public client cannot use client_credentials: it has no secret to prove itself with"
  return undefined
}

/**
 * The operator's side of the OpenID Provider's clients (`portcullis client …`): added with a
 * client_id and, for a confidential client, a secret shown once and stored as a digest; listed,
 * shown, removed, and given a new secret. Each change is audited in its transaction.
 */
export class ClientAdmin extends Effect.Service<ClientAdmin>()("app/ClientAdmin", {
  effect: Effect.gen(function* () {
    const clients = yield* OidcClients
    const crypto = yield* Cryptography
    const audit = yield* Audit
    const tx = yield* Transaction

    const named = (clientId: string) =>
      Effect.flatMap(clients.find(clientId), (found) =>
        Option.match(found, {
          onNone: () => new ClientAdminRefusal({ reason: `No client has the client_id ${clientId}` }),
          onSome: Effect.succeed
        })
      )

    /** A new secret: 256 random bits; only its digest is kept. */
    const newSecret = Effect.map(crypto.randomSecret, (secret) => ({ secret, digest: crypto.digest(secret) }))

    /** Stores a client; answers it and, for a confidential one, its secret, shown this once. */
    const add = (request: NewClient) =>
      Effect.gen(function* () {
        const problem = problemOf(request)
        if (problem !== undefined) return yield* new ClientAdminRefusal({ reason: problem })
        const secret = request.public ? undefined : yield* newSecret
        const client: StoredClient = {
          client_id: ClientId.make((yield* crypto.randomSecret).slice(0, 22)),
          name: request.name.trim(),
          public: request.public,
          first_party: request.first_party,
          self_registered: false,
          redirect_uris: [...new Set(request.redirect_uris)],
          post_logout_redirect_uris: [...new Set(request.post_logout_redirect_uris)],
          scopes: [...new Set(request.scopes)],
          grants: request.client_credentials ? ["authorization_code", "client_credentials"] : ["authorization_code"],
          secret_digest: secret?.digest ?? null,
          created_at: yield* DateTime.now
        }
        yield* tx.transaction(
          Effect.gen(function* () {
            yield* audit.append({
              type: "oidc.client_added",
              user_id: null,
              details: { client_id: client.client_id, name: client.name, public: client.public }
            })
            if (!(yield* clients.add(client)))
              return yield* new ClientAdminRefusal({
                reason: "A client with this client_id is there already; try again"
              })
          })
        )
        return { client: viewOf(client), secret: secret?.secret }
      })

    const list = Effect.map(clients.all, (all) => all.map(viewOf))

    const show = (clientId: string) => Effect.map(named(clientId), viewOf)

    /** Removes a client; the tokens it holds are refused from then on, as its client is unknown. */
    const remove = (clientId: string) =>
      Effect.gen(function* () {
        const client = yield* named(clientId)
        yield* tx.transaction(
          Effect.gen(function* () {
            yield* audit.append({
              type: "oidc.client_removed",
              user_id: null,
              details: { client_id: client.client_id, name: client.name }
            })
            if (!(yield* clients.remove(clientId)))
              return yield* new ClientAdminRefusal({ reason: `No client has the client_id ${clientId}` })
          })
        )
        return viewOf(client)
      })

    /** A new secret for a confidential client, shown this once; the old one stops working at once. */
    const rotateSecret = (clientId: string) =>
      Effect.gen(function* () {
        const client = yield* named(clientId)
        if (client.public)
          return yield* new ClientAdminRefusal({ reason: `The client ${clientId} is public: it has no secret` })
        const secret = yield* newSecret
        yield* tx.transaction(
          Effect.gen(function* () {
            yield* audit.append({
              type: "oidc.client_secret_rotated",
              user_id: null,
              details: { client_id: client.client_id }
            })
            if (!(yield* clients.replaceSecret(clientId, secret.digest)))
              return yield* new ClientAdminRefusal({ reason: `No client has the client_id ${clientId}` })
          })
        )
        return { client: viewOf(client), secret: secret.secret }
      })

    return { add, list, show, remove, rotateSecret } as const
  })
}) {}
