import { Data, Effect, Either } from "effect"
import { missingFeatures, notYetSupported } from "../../composition/startup.js"
import type { Deployment } from "../../config/Deployment.js"
import { parseSettings } from "../../config/Settings.js"

/** Start-up cannot go on; each line says why and what to set. Printed to stderr, exit 1. */
export class StartupError extends Data.TaggedError("StartupError")<{ readonly lines: ReadonlyArray<string> }> {}

/**
 * Settings from the process environment, refused whole when any is invalid or unsupported by
 * this build with this deployment (a custom LOGIN_FIELD must be one of its fields). Without a
 * deployment (migrate, the user commands, which sign nobody in) LOGIN_FIELD is not judged.
 */
export const loadSettingsFor = (deployment: Deployment | undefined) =>
  Effect.suspend(() =>
    Either.match(parseSettings(process.env), {
      onLeft: (lines) => Effect.fail(new StartupError({ lines })),
      onRight: (resolved) => {
        const refused =
          deployment === undefined ? missingFeatures(resolved.settings) : notYetSupported(resolved.settings, deployment)
        return refused.length > 0 ? Effect.fail(new StartupError({ lines: refused })) : Effect.succeed(resolved)
      }
    })
  )

/** Settings for the commands that take no deployment. */
export const loadSettings = loadSettingsFor(undefined)
