import { createServer } from "node:http"
import * as HttpApi from "@effect/platform/HttpApi"
import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import * as HttpServer from "@effect/platform/HttpServer"
import * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import { NodeHttpServer } from "@effect/platform-node"
import { Context, Duration, Effect, Layer, ManagedRuntime, Option } from "effect"
import { describe, expect, it } from "vitest"
import { requestReferences } from "../../composition/service.js"
import { StoreTimeout } from "../../infrastructure/storeTimeout.js"
import { serveApi } from "../../interfaces/http/server.js"

/** One of the application's services: taken by handlers when they are built, never from a request's context. */
class Greeter extends Context.Tag("test/Greeter")<Greeter, string>() {}

/** A route outside any group (as the metrics, demo and hosted pages are), telling what its request's context holds. */
const probe = HttpApiBuilder.Router.use((router) =>
  router.get(
    "/probe",
    Effect.gen(function* () {
      const context = yield* Effect.context<never>()
      const timeout = yield* StoreTimeout
      const request = yield* HttpServerRequest.HttpServerRequest
      return yield* HttpServerResponse.json({
        timeout_ms: Duration.toMillis(timeout),
        greeter: Option.isSome(Context.getOption(context, Greeter)),
        path: request.url
      })
    })
  )
)

const served = serveApi(requestReferences).pipe(
  Layer.provide(probe),
  Layer.provide(HttpApiBuilder.api(HttpApi.make("probe"))),
  Layer.provide(Layer.succeed(StoreTimeout, Duration.millis(1_500))),
  Layer.provide(Layer.succeed(Greeter, "hello")),
  Layer.provideMerge(NodeHttpServer.layer(createServer, { host: "127.0.0.1", port: 0 }))
)

describe("the context a request runs with", () => {
  it("holds the request and the deployment's StoreTimeout (the composition's references), not the application's services", async () => {
    const runtime = ManagedRuntime.make(served)
    try {
      const server = await runtime.runPromise(HttpServer.HttpServer)
      const response = await fetch(`http://127.0.0.1:${(server.address as HttpServer.TcpAddress).port}/probe`)
      expect(await response.json()).toEqual({ timeout_ms: 1_500, greeter: false, path: "/probe" })
    } finally {
      await runtime.dispose()
    }
  })
})
