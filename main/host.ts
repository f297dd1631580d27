import { type Context, Effect, Layer } from "effect"
import * as Logging from "../composition/logging.js"
import { Host } from "../interfaces/cli/host.js"

/**
 * The CLI's Host: the composition root, each part imported when a command first asks for it, so
 * that `--help`, `check` and `secret` start without the stores or the HTTP stack.
 */
const host: Context.Tag.Service<Host> = {
  operations: (settings) =>
    Effect.flatMap(
      Effect.promise(() => import("../composition/application.js")),
      ({ operations }) => Layer.build(Layer.orDie(operations(settings)))
    ),
  migrate: (settings, deployment) =>
    Effect.flatMap(
      Effect.promise(() => Promise.all([import("../composition/stores.js"), import("../composition/policy.js")])),
      ([stores, policy]) =>
        stores
          .migrate(settings.storage.databaseUrl, { uniqueFields: policy.uniqueFields(settings, deployment) })
          .pipe(Effect.orDie)
    ),
  serve: (config) =>
    Effect.flatMap(
      Effect.promise(() => import("./serving.js")),
      (serving) => serving.serve(config).pipe(Effect.provideService(Host, host))
    ),
  openApiDocument: (settings, deployment) =>
    Effect.map(
      Effect.promise(() => import("../composition/service.js")),
      ({ openApiDocument }) => openApiDocument(settings, deployment)
    ),
  refusals: (settings, deployment) =>
    Effect.map(
      Effect.promise(() => import("../composition/startup.js")),
      ({ missingFeatures, notYetSupported }) =>
        deployment === undefined ? missingFeatures(settings) : notYetSupported(settings, deployment)
    ),
  deploymentProblems: (value) =>
    // The features' table brings the whole HTTP API: imported only when there is a module to judge.
    Effect.map(
      Effect.promise(() => import("../composition/features.js")),
      ({ deploymentProblems }) => deploymentProblems(value)
    ),
  newSigningKey: (algorithm) =>
    // jose, under the signer, is for this command and the asymmetric algorithms only.
    Effect.flatMap(
      Effect.promise(() => import("../infrastructure/crypto/TokenSignerAsymmetric.js")),
      ({ newSigningKey }) => newSigningKey(algorithm)
    ),
  logging: (settings, fields, write) => Logging.layer(settings, fields, write)
}

export const layer = Layer.succeed(Host, host)
