import { DateTime, Effect, Option } from "effect"
import { normaliseResourceUri } from "../../domain/oidc/Resource.js"
import { Audit } from "../Audit.js"
import { OidcClients } from "../ports/OidcClients.js"
import { OidcResources, type StoredResource } from "../ports/OidcResources.js"
import { Transaction } from "../ports/Transaction.js"
import { ClientAdminRefusal, isScopeToken } from "./ClientAdmin.js"

/** A resource as the operator asks for it. */
export interface NewResource {
  readonly uri: string
  readonly scopes: ReadonlyArray<string>
  /** A confidential client that may introspect the resource's tokens. */
  readonly introspecting_client: string | undefined
}

/**
 * The operator's side of the provider's resources (`portcullis resource …`, RFC 8707): an API or
 * MCP server the provider issues tokens for, added by its URI (normalised, so that it is found as
 * clients will name it), listed and removed; each change audited in its transaction.
 */
export class ResourceAdmin extends Effect.Service<ResourceAdmin>()("app/ResourceAdmin", {
  effect: Effect.gen(function* () {
    const resources = yield* OidcResources
    const clients = yield* OidcClients
    const audit = yield* Audit
    const tx = yield* Transaction

    const add = (request: NewResource) =>
      Effect.gen(function* () {
        const uri = normaliseResourceUri(request.uri)
        if (uri === undefined)
          return yield* new ClientAdminRefusal({
            reason: `The resource must be an absolute http(s) URI without a fragment or credentials, not ${JSON.stringify(request.uri)}`
          })
        const badScope = request.scopes.find((scope) => !isScopeToken(scope))
        if (badScope !== undefined)
          return yield* new ClientAdminRefusal({ reason: `${JSON.stringify(badScope)} is not a scope` })
        if (request.introspecting_client !== undefined) {
          const client = yield* clients.find(request.introspecting_client)
          if (Option.isNone(client) || client.value.public)
            return yield* new ClientAdminRefusal({
              reason: `No confidential client has the client_id ${request.introspecting_client}`
            })
        }
        const resource: StoredResource = {
          uri,
          scopes: [...new Set(request.scopes)],
          introspecting_client: request.introspecting_client ?? null,
          created_at: yield* DateTime.now
        }
        const added = yield* tx.transaction(
          Effect.gen(function* () {
            if (!(yield* resources.add(resource))) return false
            yield* audit.append({
              type: "oidc.resource_added",
              user_id: null,
              details: { uri, scopes: resource.scopes.join(" ") }
            })
            return true
          })
        )
        if (!added) return yield* new ClientAdminRefusal({ reason: `The resource ${uri} is already registered` })
        return resource
      })

    const remove = (raw: string) =>
      Effect.gen(function* () {
        const uri = normaliseResourceUri(raw) ?? raw
        const removed = yield* tx.transaction(
          Effect.gen(function* () {
            if (!(yield* resources.remove(uri))) return false
            yield* audit.append({ type: "oidc.resource_removed", user_id: null, details: { uri } })
            return true
          })
        )
        if (!removed) return yield* new ClientAdminRefusal({ reason: `No resource has the URI ${uri}` })
        return uri
      })

    return { add, list: resources.all, remove } as const
  })
}) {}
