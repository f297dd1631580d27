import { readFileSync } from "node:fs"
import { Data, Effect, Either } from "effect"
import type { Deployment } from "../../config/Deployment.js"
import { DOTENV, dotenvIgnored, parseDotenv, unsetIn } from "../../config/dotenv.js"
import { parseSettings } from "../../config/Settings.js"
import { Host } from "./host.js"
import { Invocation } from "./invocation.js"

/** Start-up cannot go on; each line says why and what to set. Printed to stderr, exit 1. */
export class StartupError extends Data.TaggedError("StartupError")<{ readonly lines: ReadonlyArray<string> }> {}

/**
 * Settings from the environment (Invocation), refused whole when any is invalid or unsupported by
 * this build with this deployment (a custom LOGIN_FIELD must be one of its fields). Without a
 * deployment (migrate, the user commands, which sign nobody in) LOGIN_FIELD is not judged. The
 * features' table that judges them is the Host's to load, not every command's.
 */
export const loadSettingsFor = (deployment: Deployment | undefined) =>
  Effect.flatMap(Invocation, ({ env }) =>
    Either.match(parseSettings(env), {
      onLeft: (lines) => Effect.fail(new StartupError({ lines })),
      onRight: (resolved) =>
        Effect.flatMap(
          Effect.flatMap(Host, (host) => host.refusals(resolved.settings, deployment)),
          (refused) =>
            refused.length > 0 ? Effect.fail(new StartupError({ lines: refused })) : Effect.succeed(resolved)
        )
    })
  )

/** Settings for the commands that take no deployment. */
export const loadSettings = loadSettingsFor(undefined)

/**
 * The .env file of the working directory, if there is one, added to the invocation's environment
 * under its own variables, before any command reads a setting (workers inherit the result). A
 * malformed file stops every command: a setting silently lost to a typo is worse. Under
 * NODE_ENV=test or PORTCULLIS_IGNORE_DOTENV=1 the file is not opened at all, and nothing is
 * printed about it: a line on stderr would itself change the outcome of a test that reads it.
 */
export const loadDotenv = Effect.flatMap(Invocation, ({ env }) => {
  const ignored = dotenvIgnored(env)
  if (Either.isLeft(ignored)) return Effect.fail(new StartupError({ lines: [ignored.left] }))
  if (ignored.right) return Effect.void
  let text: string
  try {
    text = readFileSync(DOTENV, "utf8")
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code
    return code === "ENOENT"
      ? Effect.void
      : Effect.fail(new StartupError({ lines: [`${DOTENV} cannot be read (${code ?? "unknown error"})`] }))
  }
  return Either.match(parseDotenv(text), {
    onLeft: (line) => Effect.fail(new StartupError({ lines: [line] })),
    onRight: (variables) => Effect.sync(() => void Object.assign(env, unsetIn(env, variables)))
  })
})
