import { KeyObject, randomBytes } from "node:crypto"
import { Command } from "@effect/cli"
import { Console, Effect, Either, Option, Redacted } from "effect"
import { openApiDocument } from "../../composition/service.js"
import { notYetSupported } from "../../composition/startup.js"
import { parseSettings } from "../../config/Settings.js"
import { deploymentOption, loadConfigured } from "./loadDeployment.js"
import { StartupError } from "./startup.js"

/** Settings as plain JSON: options unwrapped, secrets redacted (private keys too), public keys as JWKs, URLs as text. */
const plain = (value: unknown): unknown => {
  if (Redacted.isRedacted(value)) return "<redacted>"
  if (value instanceof KeyObject) return value.type === "public" ? value.export({ format: "jwk" }) : "<redacted>"
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
        // One flat object, as operators know the settings: every section's names are distinct.
        const flat = Object.assign({}, ...Object.values(settings))
        return Console.log(JSON.stringify({ settings: plain(flat), warnings }, null, 2)).pipe(
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

const config = deploymentOption(
  "A deployment module (.js or .ts): its custom fields and route groups shape the document."
)

export const openapi = Command.make("openapi", { config }, ({ config }) =>
  Effect.gen(function* () {
    const { deployment, settings } = yield* loadConfigured(config)
    yield* Console.log(JSON.stringify(openApiDocument(settings, deployment), null, 2))
  })
).pipe(Command.withDescription("Print the OpenAPI document."))
