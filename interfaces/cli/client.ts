import { Args, Command, Options } from "@effect/cli"
import { Console, DateTime, Effect } from "effect"
import { ClientAdmin, type ClientAdminRefusal, type ClientView } from "../../application/oidc/ClientAdmin.js"
import type { StoreUnavailableError } from "../../application/ports/StoreUnavailableError.js"
import { operate } from "./operator.js"
import { group } from "./output.js"
import { StartupError } from "./startup.js"

/** A refusal of the use case told as the other commands' refusals are: a sentence on stderr, exit code 1. */
const administer = <A>(task: (admin: ClientAdmin) => Effect.Effect<A, ClientAdminRefusal | StoreUnavailableError>) =>
  operate(Effect.flatMap(ClientAdmin, task)).pipe(
    Effect.catchTag("ClientAdminRefusal", (refusal) => new StartupError({ lines: [refusal.reason] }))
  )

const viewJson = (client: ClientView) => ({ ...client, created_at: DateTime.formatIso(client.created_at) })

const print = (value: unknown) => Console.log(JSON.stringify(value, null, 2))

const clientId = Args.text({ name: "CLIENT_ID" }).pipe(
  Args.withDescription("The client's client_id, as `client add` and `client list` print it.")
)

const keepTheSecret = "Keep the client_secret: only its digest is stored, and it is not shown again."

const add = Command.make(
  "add",
  {
    name: Options.text("name").pipe(
      Options.withPseudoName("NAME"),
      Options.withDescription("The app's name, shown to users on the consent page and in GET /me/apps.")
    ),
    redirectUris: Options.text("redirect-uri").pipe(
      Options.withPseudoName("URI"),
      Options.repeated,
      Options.withDescription(
        "Where the browser returns with the code; repeat for each. Matched exactly, except that http://127.0.0.1 and http://[::1] match on any port (native apps)."
      )
    ),
    postLogoutRedirectUris: Options.text("post-logout-redirect-uri").pipe(
      Options.withPseudoName("URI"),
      Options.repeated,
      Options.withDescription("Where end-session may send the browser after signing out; repeat for each.")
    ),
    isPublic: Options.boolean("public").pipe(
      Options.withDescription(
        "A public client (a single-page, native or command-line app, an agent): no secret, PKCE alone; asked for consent every time."
      )
    ),
    firstParty: Options.boolean("first-party").pipe(
      Options.withDescription("One of the deployment's own apps: users are never asked for consent.")
    ),
    scopes: Options.text("scope").pipe(
      Options.withPseudoName("SCOPE"),
      Options.repeated,
      Options.withDescription(
        "A scope of the client's own, beyond openid, profile, email, offline_access and permissions; repeat for each."
      )
    ),
    grant: Options.choice("grant", ["client_credentials"]).pipe(
      Options.repeated,
      Options.withDescription("client_credentials: the client may also get tokens for itself, with no user.")
    )
  },
  ({ name, redirectUris, postLogoutRedirectUris, isPublic, firstParty, scopes, grant }) =>
    Effect.gen(function* () {
      const added = yield* administer((admin) =>
        admin.add({
          name,
          redirect_uris: redirectUris,
          post_logout_redirect_uris: postLogoutRedirectUris,
          public: isPublic,
          first_party: firstParty,
          scopes,
          client_credentials: grant.includes("client_credentials")
        })
      )
      yield* print({
        ...viewJson(added.client),
        ...(added.secret === undefined ? {} : { client_secret: added.secret })
      })
      if (added.secret !== undefined) yield* Console.error(keepTheSecret)
    })
).pipe(
  Command.withDescription(
    `Add a client of the OpenID Provider and print it as JSON, with its client_secret when it is confidential.`
  )
)

const list = Command.make("list", {}, () =>
  Effect.flatMap(
    administer((admin) => admin.list),
    (clients) => print(clients.map(viewJson))
  )
).pipe(Command.withDescription(`Print every client as JSON, oldest first, without secrets.`))

const show = Command.make("show", { clientId }, ({ clientId }) =>
  Effect.flatMap(
    administer((admin) => admin.show(clientId)),
    (client) => print(viewJson(client))
  )
).pipe(Command.withDescription(`Print one client as JSON, without its secret.`))

const remove = Command.make("remove", { clientId }, ({ clientId }) =>
  Effect.flatMap(
    administer((admin) => admin.remove(clientId)),
    (client) => Console.log(`Removed ${client.client_id} (${client.name}); its tokens are refused from now on.`)
  )
).pipe(Command.withDescription(`Remove a client.`))

const rotateSecret = Command.make("rotate-secret", { clientId }, ({ clientId }) =>
  Effect.gen(function* () {
    const rotated = yield* administer((admin) => admin.rotateSecret(clientId))
    yield* print({ client_id: rotated.client.client_id, client_secret: rotated.secret })
    yield* Console.error(`${keepTheSecret} The old secret no longer works.`)
  })
).pipe(
  Command.withDescription(`Give a confidential client a new client_secret, printed once; the old one stops working.`)
)

export const client = group("client", [add, list, show, remove, rotateSecret]).pipe(
  Command.withDescription(
    "The OpenID Provider's clients: apps, tools and agents that sign users in through Portcullis (docs/integrating.md)."
  )
)
