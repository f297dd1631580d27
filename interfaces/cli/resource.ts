import { Args, Command, Options } from "@effect/cli"
import { Console, DateTime, Effect, Option } from "effect"
import type { ClientAdminRefusal } from "../../application/oidc/ClientAdmin.js"
import { ResourceAdmin } from "../../application/oidc/ResourceAdmin.js"
import type { StoredResource } from "../../application/ports/OidcResources.js"
import type { StoreUnavailableError } from "../../application/ports/StoreUnavailableError.js"
import { operate } from "./operator.js"
import { group } from "./output.js"
import { StartupError } from "./startup.js"

const administer = <A>(task: (admin: ResourceAdmin) => Effect.Effect<A, ClientAdminRefusal | StoreUnavailableError>) =>
  operate(Effect.flatMap(ResourceAdmin, task)).pipe(
    Effect.catchTag("ClientAdminRefusal", (refusal) => new StartupError({ lines: [refusal.reason] }))
  )

const viewJson = (resource: StoredResource) => ({ ...resource, created_at: DateTime.formatIso(resource.created_at) })

const print = (value: unknown) => Console.log(JSON.stringify(value, null, 2))

const add = Command.make(
  "add",
  {
    uri: Options.text("uri").pipe(
      Options.withPseudoName("URI"),
      Options.withDescription(
        "The resource's URI, as clients name it in `resource` (RFC 8707) and as its tokens' aud will say it: an absolute http(s) URI, e.g. https://mcp.example.com/mcp."
      )
    ),
    scopes: Options.text("scope").pipe(
      Options.withPseudoName("SCOPE"),
      Options.repeated,
      Options.withDescription("A scope the resource defines, which clients may ask for; repeat for each.")
    ),
    client: Options.text("client").pipe(
      Options.withPseudoName("CLIENT_ID"),
      Options.optional,
      Options.withDescription(
        "A confidential client that may introspect this resource's tokens (the resource server's own)."
      )
    )
  },
  ({ uri, scopes, client }) =>
    Effect.flatMap(
      administer((admin) => admin.add({ uri, scopes, introspecting_client: Option.getOrUndefined(client) })),
      (added) => print(viewJson(added))
    )
).pipe(
  Command.withDescription(
    `Register a resource (an API or an MCP server) the OpenID Provider issues tokens for, and print it as JSON.`
  )
)

const list = Command.make("list", {}, () =>
  Effect.flatMap(
    administer((admin) => admin.list),
    (resources) => print(resources.map(viewJson))
  )
).pipe(Command.withDescription(`Print every resource as JSON, oldest first.`))

const remove = Command.make(
  "remove",
  { uri: Args.text({ name: "URI" }).pipe(Args.withDescription("The resource's URI, as `resource list` prints it.")) },
  ({ uri }) =>
    Effect.flatMap(
      administer((admin) => admin.remove(uri)),
      (removed) => Console.log(`Removed ${removed}; a request naming it is refused from now on (invalid_target).`)
    )
).pipe(Command.withDescription(`Remove a resource.`))

export const resource = group("resource", [add, list, remove]).pipe(
  Command.withDescription(
    "The OpenID Provider's resources (RFC 8707): APIs and MCP servers whose tokens name them in aud (docs/integrating.md)."
  )
)
