import { createServer } from "node:http"
import { Command } from "@effect/cli"
import { HttpServer } from "@effect/platform"
import { NodeHttpServer } from "@effect/platform-node"
import { Effect, Layer } from "effect"
import { application, deliveryWarnings, resolveSecretKey, restoreRevocations } from "../../infrastructure/layers.js"
import * as Logging from "../../infrastructure/logging.js"
import { httpLayer } from "../http/server.js"
import { loadSettings } from "./startup.js"

export const serve = Command.make("serve", {}, () =>
  Effect.gen(function* () {
    const { settings, warnings } = yield* loadSettings
    const App = application(settings, resolveSecretKey(settings))
    const Server = httpLayer(settings).pipe(
      HttpServer.withLogAddress,
      Layer.provide(Layer.effectDiscard(restoreRevocations)),
      Layer.provide(NodeHttpServer.layer(createServer, { host: settings.host, port: settings.port })),
      Layer.provide(App)
    )
    yield* Effect.forEach([...warnings, ...deliveryWarnings(settings, {})], (warning) => Effect.logWarning(warning), {
      discard: true
    }).pipe(Effect.zipRight(Layer.launch(Server)), Effect.provide(Logging.layer(settings)))
  })
).pipe(Command.withDescription("Serve the HTTP API (the default for npm start)."))
