import * as NodeHttpServer from "@effect/platform-node/NodeHttpServer"
import { Effect, Layer, type Option } from "effect"
import { resolveSecretKey } from "../composition/adapters.js"
import { uniqueFields } from "../composition/policy.js"
import { service } from "../composition/service.js"
import { redisTrial, startupWarnings } from "../composition/startup.js"
import { database } from "../composition/stores.js"
import { loadDeployment } from "../interfaces/cli/loadDeployment.js"
import { commandLogging } from "../interfaces/cli/logLevel.js"
import { loadSettingsFor } from "../interfaces/cli/startup.js"
import { drainingServer, stoppedLine } from "./drain.js"
import { boundHeapGrowth } from "./heapGrowth.js"
import { startFailure } from "./startFailure.js"
import { isPrimary, portTrial, superviseWorkers, workerId } from "./workers.js"

/** What `serve` runs: the service of the settings and the deployment module of `config`, until stopped. */
export const serve = (config: Option.Option<string>) =>
  Effect.gen(function* () {
    const deployment = yield* loadDeployment(config)
    const { settings, warnings } = yield* loadSettingsFor(deployment)
    const { server, storage, logging } = settings
    // With several processes each line says whose it is; with one, the field would say nothing.
    const logged = commandLogging(logging, logging.logLevel, server.workers > 1 ? { worker: workerId() } : {})
    // Start-up warnings are the settings', the same in every process: told once per start, by the
    // primary (the only process when WORKERS=1), not once more by each worker it starts.
    const warned = Effect.forEach(
      isPrimary() ? [...warnings, ...startupWarnings(settings, deployment)] : [],
      (warning) => Effect.logWarning(warning),
      { discard: true }
    )
    if (server.workers > 1 && isPrimary()) {
      // Migrate once, here, before the workers open the database, so they never race to.
      const migrated = database(storage.databaseUrl, {
        idType: storage.userIdType,
        uniqueFields: uniqueFields(settings, deployment)
      })
      return yield* warned.pipe(
        Effect.zipRight(Layer.build(portTrial(server.host, server.port))),
        Effect.zipRight(Layer.build(migrated)),
        Effect.zipRight(redisTrial(settings)),
        Effect.scoped,
        Effect.mapError(startFailure(settings)),
        Effect.zipRight(superviseWorkers(server.workers, resolveSecretKey(settings))),
        Effect.provide(logged)
      )
    }
    // This process serves: its heap is bounded as heapGrowth.ts says (the primary of several only supervises).
    yield* Effect.sync(() => boundHeapGrowth())
    const http = drainingServer()
    const Service = service(
      settings,
      deployment,
      NodeHttpServer.layer(http.create, { host: server.host, port: server.port })
    )
    // Interruption (SIGTERM, SIGINT) reaches here once the launch's scope is closed: the server
    // has waited for its requests in flight, and the stores are closed.
    const launched = redisTrial(settings).pipe(
      Effect.zipRight(Layer.launch(Service)),
      Effect.mapError(startFailure(settings)),
      Effect.onInterrupt(() => Effect.logInfo(stoppedLine(settings, http.drained()), { drained: http.drained() }))
    )
    yield* warned.pipe(Effect.zipRight(launched), Effect.provide(logged))
  })
