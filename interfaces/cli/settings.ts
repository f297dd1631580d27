import { randomBytes } from "node:crypto"
import { Command, Options } from "@effect/cli"
import { OpenApi } from "@effect/platform"
import { Console, Effect, Either, Option, Redacted } from "effect"
import { parseSettings } from "../../config/Settings.js"
import { notYetSupported } from "../../infrastructure/layers.js"
import { makeApi } from "../http/Api.js"
import { loadDeployment } from "./deployment.js"
import { loadSettingsFor, StartupError } from "./startup.js"

/** Settings as plain JSON: options unwrapped, secrets redacted, URLs as text. */
const plain = (value: unknown): unknown => {
  if (Redacted.isRedacted(value)) return "<redacted>"
  if (Option.isOption(value)) return Option.match(value, { onNone: () => null, onSome: plain })
  if (value instanceof URL) return value.href
  if (Array.isArray(value)) return value.map(plain)
  if (typeof value === "object" && value !== null) {
    return Object.fromEntries(Object.entries(value).map(([key, entry]) => [key, plain(entry)]))
  }
  return value
}

export const check = Command.make("check", {}, () =>
  Effect.suspend(() =>
    Either.match(parseSettings(process.env), {
      onLeft: (lines) => Effect.fail(new StartupError({ lines })),
      onRight: ({ settings, warnings }) => {
        const refused = notYetSupported(settings)
        return Console.log(JSON.stringify({ settings: plain(settings), warnings }, null, 2)).pipe(
          Effect.zipRight(refused.length > 0 ? Effect.fail(new StartupError({ lines: refused })) : Effect.void)
        )
      }
    })
  )
).pipe(
  Command.withDescription("Print the resolved settings (secrets redacted) and warnings; exit 1 if any is invalid.")
)

export const secret = Command.make("secret", {}, () => Console.log(randomBytes(48).toString("base64url"))).pipe(
  Command.withDescription("Print a new random SECRET_KEY.")
)

const config = Options.file("config", { exists: "yes" }).pipe(
  Options.optional,
  Options.withDescription("A deployment module (.js or .ts): its custom fields and route groups shape the document.")
)

export const openapi = Command.make("openapi", { config }, ({ config }) =>
  Effect.gen(function* () {
    const deployment = yield* loadDeployment(config)
    const { settings } = yield* loadSettingsFor(Option.isSome(config) ? deployment : undefined)
    yield* Console.log(JSON.stringify(OpenApi.fromApi(makeApi({ ...settings, deployment })), null, 2))
  })
).pipe(Command.withDescription("Print the OpenAPI document."))
