import { Command, Options } from "@effect/cli"
import { Console, Effect, Option, Redacted, Schema } from "effect"
import { Accounts } from "../../application/Accounts.js"
import { cliContext, RequestContext } from "../../application/Audit.js"
import type { UserFlags } from "../../application/ports/UserRepo.js"
import { migrate as migrateDatabase } from "../../composition/adapters.js"
import { application } from "../../composition/application.js"
import * as Logging from "../../composition/logging.js"
import { uniqueFields } from "../../composition/policy.js"
import { Email } from "../../domain/User.js"
import { deploymentOption, loadConfigured } from "./loadDeployment.js"
import { loadSettings, StartupError } from "./startup.js"

const decodeEmail = (value: string) =>
  Schema.decodeUnknown(Email)(value).pipe(
    Effect.mapError(() => new StartupError({ lines: [`--email ${JSON.stringify(value)} is not an email address`] }))
  )

/** Runs an operator task with the deployment's adapters; logs stay quiet unless they matter. */
const withAccounts = <A, E>(task: (accounts: Accounts) => Effect.Effect<A, E>) =>
  Effect.gen(function* () {
    const { settings } = yield* loadSettings
    return yield* Effect.flatMap(Accounts, task).pipe(
      Effect.provide(application(settings)),
      Effect.provide(Logging.layer({ ...settings.logging, logLevel: "warning" })),
      Effect.provideService(RequestContext, cliContext)
    )
  })

/** The whole of standard input, without its final newline: how a password avoids the process list. */
const readStdin = Effect.promise(async () => {
  const chunks: Array<Buffer> = []
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer)
  return Buffer.concat(chunks)
    .toString("utf8")
    .replace(/\r?\n$/, "")
})

const config = deploymentOption(
  "A deployment module (.js or .ts): its custom login field gets its unique index with the migrations."
)

export const migrate = Command.make("migrate", { config }, ({ config }) =>
  Effect.gen(function* () {
    const { deployment, settings } = yield* loadConfigured(config)
    const applied = yield* migrateDatabase(settings.storage.databaseUrl, {
      uniqueFields: uniqueFields(settings, deployment)
    }).pipe(Effect.orDie)
    yield* Console.log(
      Option.match(applied, {
        onNone: () => "The in-memory database needs no migrations.",
        onSome: (migrations) =>
          migrations.length === 0
            ? "The database is up to date."
            : `Applied: ${migrations.map(([id, name]) => `${String(id).padStart(4, "0")}_${name}`).join(", ")}`
      })
    )
  })
).pipe(Command.withDescription("Apply pending database migrations."))

export const createSuperuser = Command.make(
  "create-superuser",
  {
    email: Options.text("email"),
    password: Options.redacted("password").pipe(
      Options.optional,
      Options.withDescription("Read from standard input when omitted, which keeps it out of the process list.")
    )
  },
  ({ email, password }) =>
    Effect.gen(function* () {
      const address = yield* decodeEmail(email)
      const secret = Option.isSome(password) ? password.value : Redacted.make(yield* readStdin)
      const user = yield* withAccounts((accounts) => accounts.createSuperuser(address, secret))
      yield* Console.log(`Created superuser ${user.email} (${user.id}).`)
    })
).pipe(Command.withDescription("Create an active, verified superuser."))

const flag = (name: string) => Options.choice(name, ["true", "false"]).pipe(Options.optional)

const update = Command.make(
  "update",
  { email: Options.text("email"), active: flag("active"), verified: flag("verified"), superuser: flag("superuser") },
  ({ email, active, verified, superuser }) =>
    Effect.gen(function* () {
      const address = yield* decodeEmail(email)
      const asFlag = (value: Option.Option<"true" | "false">) =>
        Option.getOrUndefined(Option.map(value, (v) => v === "true"))
      const flags: UserFlags = Object.fromEntries(
        Object.entries({
          is_active: asFlag(active),
          is_verified: asFlag(verified),
          is_superuser: asFlag(superuser)
        }).filter(([, value]) => value !== undefined)
      )
      const user = yield* withAccounts((accounts) => accounts.setFlags(address, flags))
      yield* Console.log(JSON.stringify(user, null, 2))
    })
).pipe(Command.withDescription("Change a user's flags; deactivating ends all of their sessions."))

export const user = Command.make("user").pipe(
  Command.withSubcommands([update]),
  Command.withDescription("Operator commands on one user.")
)
