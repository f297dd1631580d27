import { Args, Command, Options } from "@effect/cli"
import { Console, DateTime, Effect, Option, Redacted } from "effect"
import type { StoreUnavailableError } from "../../application/ports/StoreUnavailableError.js"
import { type EndpointView, WebhookAdmin, type WebhookAdminRefusal } from "../../application/WebhookAdmin.js"
import type { Subscription } from "../../domain/Webhook.js"
import { operate } from "./operator.js"
import { group } from "./output.js"
import { StartupError } from "./startup.js"

const seen = "Running servers see the change within 5 s."

/** A refusal of the use case told as the other commands' refusals are: a sentence on stderr, exit code 1. */
const administer = <A>(task: (admin: WebhookAdmin) => Effect.Effect<A, WebhookAdminRefusal | StoreUnavailableError>) =>
  operate(Effect.flatMap(WebhookAdmin, task)).pipe(
    Effect.catchTag("WebhookAdminRefusal", (refusal) => new StartupError({ lines: [refusal.reason] }))
  )

const viewJson = (endpoint: EndpointView) => ({
  ...endpoint,
  created_at: endpoint.created_at === null ? null : DateTime.formatIso(endpoint.created_at)
})

const id = Args.text({ name: "ID" }).pipe(Args.withDescription("The endpoint's id, as `webhook list` prints it."))

const parseEvents = (value: string): Subscription =>
  value.trim() === "*"
    ? "*"
    : value
        .split(",")
        .map((type) => type.trim())
        .filter((type) => type !== "")

const add = Command.make(
  "add",
  {
    url: Options.text("url").pipe(Options.withPseudoName("URL"), Options.withDescription("Where to POST the events.")),
    events: Options.text("events").pipe(
      Options.withPseudoName("TYPES"),
      Options.withDescription(
        'The event types sent, comma-separated (after_register,session.revoked), or "*" for every one.'
      )
    ),
    secret: Options.redacted("secret").pipe(
      Options.withPseudoName("whsec_…"),
      Options.optional,
      Options.withDescription("The signing secret, whsec_ and 24 to 64 bytes in base64; made for you when not given.")
    )
  },
  ({ url, events, secret }) =>
    Effect.gen(function* () {
      const added = yield* administer((admin) =>
        admin.add({
          url,
          events: parseEvents(events),
          ...Option.match(secret, { onNone: () => ({}), onSome: (given) => ({ secret: Redacted.value(given) }) })
        })
      )
      yield* Console.log(JSON.stringify({ ...viewJson(added.endpoint), secret: added.secret }, null, 2))
      yield* Console.error(`Keep the secret: it is not shown again. ${seen}`)
      if (added.refusal !== undefined)
        yield* Console.error(`warning: nothing will be delivered there as the service is set: ${added.refusal}`)
    })
).pipe(
  Command.withDescription(
    `Add an endpoint, stored with its secret sealed under SERVICE_SECRET_KEY, and print it with its secret.`
  )
)

const list = Command.make("list", {}, () =>
  Effect.flatMap(
    administer((admin) => admin.list),
    (endpoints) => Console.log(JSON.stringify(endpoints.map(viewJson), null, 2))
  )
).pipe(
  Command.withDescription(
    `Print every endpoint (those of SERVICE_WEBHOOKS and those added here) as JSON, without secrets.`
  )
)

const remove = Command.make("remove", { id }, ({ id }) =>
  Effect.flatMap(
    administer((admin) => admin.remove(id)),
    (endpoint) => Console.log(`Removed ${endpoint.id} (${endpoint.url}); its undelivered messages are dropped. ${seen}`)
  )
).pipe(Command.withDescription(`Remove an endpoint added with \`webhook add\`.`))

const test = Command.make("test", { id }, ({ id }) =>
  Effect.gen(function* () {
    const outcome = yield* administer((admin) => admin.test(id))
    if (outcome._tag === "Failed") return yield* new StartupError({ lines: [`Not delivered: ${outcome.reason}`] })
    yield* Console.log(`Delivered: the endpoint answered ${outcome.status}.`)
  })
).pipe(
  Command.withDescription(
    `Send the endpoint one signed message of type webhook.test now and say what it answered (exit code 1 unless 2xx).`
  )
)

const retry = Command.make(
  "retry",
  {
    message: Args.text({ name: "MESSAGE_ID" }).pipe(
      Args.withDescription("A dead message's id (msg_…, the webhook-id header its tries carried)."),
      Args.optional
    ),
    dead: Options.boolean("dead").pipe(Options.withDescription("Every dead message."))
  },
  ({ message, dead }) =>
    Effect.gen(function* () {
      if (Option.isSome(message) === dead) {
        return yield* new StartupError({ lines: ["Give a message id or --dead, one of them"] })
      }
      const which = Option.match(message, { onNone: () => "dead" as const, onSome: (id) => ({ id }) })
      const count = yield* administer((admin) => admin.retry(which))
      yield* Console.log(`${count} dead ${count === 1 ? "message" : "messages"} due again, sent within a second.`)
    })
).pipe(Command.withDescription(`Send dead messages again, from their first try, once a receiver is back.`))

export const webhook = group("webhook", [add, list, remove, test, retry]).pipe(
  Command.withDescription("Webhook endpoints stored in the database, and dead messages sent again (docs/operating.md).")
)
