import { extname, resolve } from "node:path"
import { pathToFileURL } from "node:url"
import { Options } from "@effect/cli"
import { Effect, Option } from "effect"
import type { Deployment } from "../../config/Deployment.js"
import { Host } from "./host.js"
import { loadSettingsFor, StartupError } from "./startup.js"

/** A CommonJS module's `export default` arrives as `{ default }` through ESM interop. */
const withoutInterop = (value: unknown): unknown =>
  typeof value === "object" &&
  value !== null &&
  "default" in value &&
  Object.keys(value).every((key) => key === "default" || key === "__esModule")
    ? value.default
    : value

/**
 * A TypeScript module compiled on the fly by tsx. tsx (and esbuild under it) is loaded only
 * here: a deployment in JavaScript, or none, does not pay for it at start-up.
 */
const importTypeScript = async (url: string): Promise<Record<string, unknown>> => {
  const { tsImport } = await import("tsx/esm/api")
  return tsImport(url, import.meta.url)
}

/**
 * The deployment module named by `--config`: its default export (or a `deployment` export).
 * TypeScript modules are compiled on the fly with tsx; JavaScript ones are imported as they are.
 */
export const loadDeployment = (path: Option.Option<string>) =>
  Option.match(path, {
    onNone: () => Effect.succeed<Deployment>({}),
    onSome: (file) =>
      Effect.gen(function* () {
        const url = pathToFileURL(resolve(file)).href
        const module = yield* Effect.tryPromise({
          try: (): Promise<Record<string, unknown>> =>
            [".ts", ".mts", ".cts"].includes(extname(file)) ? importTypeScript(url) : import(url),
          catch: (error) =>
            new StartupError({
              lines: [`--config ${file} could not be loaded: ${error instanceof Error ? error.message : String(error)}`]
            })
        })
        const deployment = withoutInterop(module.default ?? module.deployment)
        const problems = yield* (yield* Host).deploymentProblems(deployment)
        if (problems.length > 0) {
          return yield* new StartupError({ lines: problems.map((problem) => `--config ${file}: ${problem}`) })
        }
        return deployment as Deployment
      })
  })

/** The `--config` option of the commands a deployment module shapes, described for each. */
export const deploymentOption = (description: string) =>
  Options.file("config", { exists: "yes" }).pipe(Options.optional, Options.withDescription(description))

/**
 * The deployment module of `--config` and the settings, judged against that deployment when one
 * is named (a custom LOGIN_FIELD must be one of its fields), else without one.
 */
export const loadConfigured = (config: Option.Option<string>) =>
  Effect.gen(function* () {
    const deployment = yield* loadDeployment(config)
    const resolved = yield* loadSettingsFor(Option.isSome(config) ? deployment : undefined)
    return { deployment, ...resolved }
  })
