import { Context, type Effect, type Layer, type Option, type Scope } from "effect"
import type { Accounts } from "../../application/Accounts.js"
import type { AddressChangeUndo } from "../../application/AddressChangeUndo.js"
import type { Admin } from "../../application/Admin.js"
import type { Audit } from "../../application/Audit.js"
import type { ClientAdmin } from "../../application/oidc/ClientAdmin.js"
import type { ResourceAdmin } from "../../application/oidc/ResourceAdmin.js"
import type { Pruning } from "../../application/Pruning.js"
import type { WebhookAdmin } from "../../application/WebhookAdmin.js"
import type { Deployment } from "../../config/Deployment.js"
import type { Settings } from "../../config/Settings.js"
import type { LoggingSettings } from "../../config/sections/logging.js"
import type { AsymmetricAlgorithm, PublicJwk } from "../../domain/Jwks.js"
import type { Invocation } from "./invocation.js"
import type { StartupError } from "./startup.js"

/** The use cases the operator commands run, over the stores of the settings. */
export type Operations =
  | Accounts
  | AddressChangeUndo
  | Admin
  | Audit
  | ClientAdmin
  | ResourceAdmin
  | Pruning
  | WebhookAdmin

/**
 * What the commands need of the program above them (main/host.ts): the composition root, handed
 * in rather than imported, so that this folder parses and prints and names no adapter. Each part
 * is loaded when a command asks for it, so that `--help` and the commands that need none start
 * without the stores or the HTTP stack.
 */
export class Host extends Context.Tag("cli/Host")<
  Host,
  {
    /** The application of `settings`, its stores migrated first, open for as long as the scope. */
    readonly operations: (settings: Settings) => Effect.Effect<Context.Context<Operations>, never, Scope.Scope>
    /** Applies the pending migrations of the settings' database; none for the memory store. */
    readonly migrate: (
      settings: Settings,
      deployment: Deployment
    ) => Effect.Effect<Option.Option<ReadonlyArray<readonly [number, string]>>>
    /** Serves the settings and the deployment module of `config` until stopped. */
    readonly serve: (config: Option.Option<string>) => Effect.Effect<void, StartupError, Invocation>
    /** The OpenAPI document these settings and this deployment serve. */
    readonly openApiDocument: (settings: Settings, deployment: Deployment) => Effect.Effect<unknown>
    /**
     * Why the settings cannot serve with this deployment (a LOGIN_FIELD it lacks), or, without
     * one, what no deployment could make them serve; empty when they can.
     */
    readonly refusals: (settings: Settings, deployment: Deployment | undefined) => Effect.Effect<ReadonlyArray<string>>
    /** What is wrong with a deployment module's export; empty when it is one. */
    readonly deploymentProblems: (value: unknown) => Effect.Effect<ReadonlyArray<string>>
    /** A new private key for the algorithm, as PEM (PKCS#8), and its public JWK with its kid. */
    readonly newSigningKey: (
      algorithm: AsymmetricAlgorithm
    ) => Effect.Effect<{ readonly pem: string; readonly jwk: PublicJwk }>
    /** The logger of LOG_FORMAT at the level given, its lines given to `write`; `fields` join every line. */
    readonly logging: (
      settings: LoggingSettings,
      fields: Readonly<Record<string, number>>,
      write: (line: string) => void
    ) => Layer.Layer<never>
  }
>() {}
