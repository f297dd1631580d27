import { Command, Options } from "@effect/cli"
import { Console, Effect, Option } from "effect"
import { Accounts } from "../../application/Accounts.js"
import { Host } from "./host.js"
import { deploymentOption, loadConfigured } from "./loadDeployment.js"
import { decodeNewEmail, operate } from "./operator.js"
import { passwordOptions, readPassword } from "./password.js"

const config = deploymentOption(
  "A deployment module (.js or .ts): its custom login field gets its unique index with the migrations."
)

export const migrate = Command.make("migrate", { config }, ({ config }) =>
  Effect.gen(function* () {
    const { deployment, settings } = yield* loadConfigured(config)
    const applied = yield* (yield* Host).migrate(settings, deployment)
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
).pipe(
  Command.withDescription("Apply pending database migrations to SERVICE_DATABASE_URL (serve does it too, at start-up).")
)

export const createSuperuser = Command.make(
  "create-superuser",
  {
    email: Options.text("email").pipe(
      Options.withPseudoName("EMAIL"),
      Options.withDescription(
        "The superuser's email address; refused when an account has it or it looks like another (invisible or mixed-script characters)."
      )
    ),
    ...passwordOptions
  },
  ({ email, ...password }) =>
    Effect.gen(function* () {
      const address = yield* decodeNewEmail(email)
      const user = yield* operate(
        Effect.gen(function* () {
          const secret = yield* readPassword(password)
          return yield* (yield* Accounts).createSuperuser(address, secret)
        })
      )
      yield* Console.log(`Created superuser ${user.email} (${user.id}).`)
    })
).pipe(
  Command.withDescription(
    `Create an active, verified superuser. Without --password or --password-stdin, asks for the password without showing it (twice). The password must pass SERVICE_PASSWORD_MIN_LENGTH and SERVICE_PASSWORD_MAX_LENGTH.`
  )
)
