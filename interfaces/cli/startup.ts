import { Data, Effect, Either } from "effect"
import { parseSettings } from "../../config/Settings.js"
import { notYetSupported } from "../../infrastructure/layers.js"

/** Start-up cannot go on; each line says why and what to set. Printed to stderr, exit 1. */
export class StartupError extends Data.TaggedError("StartupError")<{ readonly lines: ReadonlyArray<string> }> {}

/** Settings from the process environment, refused whole when any is invalid or unsupported. */
export const loadSettings = Effect.suspend(() =>
  Either.match(parseSettings(process.env), {
    onLeft: (lines) => Effect.fail(new StartupError({ lines })),
    onRight: (resolved) => {
      const refused = notYetSupported(resolved.settings)
      return refused.length > 0 ? Effect.fail(new StartupError({ lines: refused })) : Effect.succeed(resolved)
    }
  })
)
