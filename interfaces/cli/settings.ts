import { randomBytes } from "node:crypto"
import { Command, Options } from "@effect/cli"
import { Console, Effect, Either, Option } from "effect"
import { parseSettings, type ResolvedSettings } from "../../config/Settings.js"
import { Host } from "./host.js"
import { Invocation } from "./invocation.js"
import { deploymentOption, loadConfigured } from "./loadDeployment.js"
import { StartupError } from "./startup.js"

const json = Options.boolean("json").pipe(
  Options.withDescription("Print {settings, warnings} as JSON instead, each setting by its variable's name.")
)

/**
 * One line per setting, `SERVICE_NAME=value`, in its environment form (for reading: values are
 * not shell-quoted); an unset setting without a default has no value, like an empty variable.
 */
const lines = (variables: ResolvedSettings["variables"]) =>
  [...variables].map(([name, value]) => `${name}=${Option.getOrElse(value, () => "")}`).join("\n")

const asJson = ({ variables, warnings }: ResolvedSettings) =>
  JSON.stringify(
    {
      settings: Object.fromEntries([...variables].map(([name, value]) => [name, Option.getOrNull(value)])),
      warnings
    },
    null,
    2
  )

export const check = Command.make("check", { json }, ({ json }) =>
  Effect.flatMap(Invocation, ({ env }) =>
    Either.match(parseSettings(env), {
      onLeft: (lines) => Effect.fail(new StartupError({ lines })),
      onRight: (resolved) => {
        const report = json
          ? Console.log(asJson(resolved))
          : Console.log(lines(resolved.variables)).pipe(
              Effect.zipRight(Effect.forEach(resolved.warnings, (warning) => Console.error(`warning: ${warning}`)))
            )
        return report.pipe(
          Effect.zipRight(Effect.flatMap(Host, (host) => host.refusals(resolved.settings, {}))),
          Effect.flatMap((refused) =>
            refused.length > 0 ? Effect.fail(new StartupError({ lines: refused })) : Effect.void
          )
        )
      }
    })
  )
).pipe(
  Command.withDescription(
    "Print every SERVICE_ setting as it resolves (SERVICE_PORT=8000, defaults included), with secret keys, private keys, client secrets and URL passwords masked (postgres://app:***@db/portcullis); warnings go to stderr. Exit 1, one line per problem, on an invalid setting."
  )
)

export const secret = Command.make("secret", {}, () => Console.log(randomBytes(48).toString("base64url"))).pipe(
  Command.withDescription("Print a new random key for SERVICE_SECRET_KEY (48 random bytes, base64url).")
)

const config = deploymentOption(
  "A deployment module (.js or .ts): its custom fields and route groups shape the document."
)

export const openapi = Command.make("openapi", { config }, ({ config }) =>
  Effect.gen(function* () {
    const { deployment, settings } = yield* loadConfigured(config)
    const document = yield* (yield* Host).openApiDocument(settings, deployment)
    yield* Console.log(JSON.stringify(document, null, 2))
  })
).pipe(
  Command.withDescription(
    "Print the OpenAPI document of the API these settings serve (SERVICE_API_PREFIX, SERVICE_AUTH_ROUTER_PREFIX and the settings that turn route groups on)."
  )
)
