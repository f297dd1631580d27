import { createServer } from "node:http"
import { Command, Options } from "@effect/cli"
import { HttpServer } from "@effect/platform"
import { NodeHttpServer } from "@effect/platform-node"
import { Effect, Layer } from "effect"
import {
  application,
  deliveryWarnings,
  persistence,
  resolveSecretKey,
  restoreRevocations
} from "../../infrastructure/layers.js"
import * as Logging from "../../infrastructure/logging.js"
import { httpLayer } from "../http/server.js"
import { loadDeployment } from "./deployment.js"
import { loadSettingsFor } from "./startup.js"
import { isPrimary, superviseWorkers } from "./workers.js"

const config = Options.file("config", { exists: "yes" }).pipe(
  Options.optional,
  Options.withDescription(
    "A deployment module (.js or .ts) whose default export is a Deployment: event handlers, custom user fields, password policy, custom claims, route groups."
  )
)

export const serve = Command.make("serve", { config }, ({ config }) =>
  Effect.gen(function* () {
    const deployment = yield* loadDeployment(config)
    const { settings, warnings } = yield* loadSettingsFor(deployment)
    if (settings.workers > 1 && isPrimary()) {
      // Migrate once, here, before the workers open the database, so they never race to.
      return yield* Layer.build(persistence(settings.databaseUrl, { idType: settings.userIdType })).pipe(
        Effect.scoped,
        Effect.zipRight(superviseWorkers(settings.workers, resolveSecretKey(settings))),
        Effect.provide(Logging.layer(settings))
      )
    }
    const App = application(settings, resolveSecretKey(settings), deployment)
    const Server = httpLayer(settings, deployment).pipe(
      HttpServer.withLogAddress,
      Layer.provide(Layer.effectDiscard(restoreRevocations)),
      Layer.provide(NodeHttpServer.layer(createServer, { host: settings.host, port: settings.port })),
      Layer.provide(App)
    )
    yield* Effect.forEach(
      [...warnings, ...deliveryWarnings(settings, deployment)],
      (warning) => Effect.logWarning(warning),
      {
        discard: true
      }
    ).pipe(Effect.zipRight(Layer.launch(Server)), Effect.provide(Logging.layer(settings)))
  })
).pipe(Command.withDescription("Serve the HTTP API (the default for npm start)."))
