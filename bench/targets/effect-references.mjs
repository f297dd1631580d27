// The Effect references: what Effect 3's HttpApi costs with nothing of ours in it. GET /hello is
// one static route; GET /me is the lean /me (bearer middleware, jose with the key imported once,
// one SELECT through @effect/sql-sqlite-node; no blacklist, family or roles check). TRACER=off
// turns Effect's tracer off.
import { createServer } from "node:http"
import {
  HttpApi,
  HttpApiBuilder,
  HttpApiEndpoint,
  HttpApiError,
  HttpApiGroup,
  HttpApiMiddleware,
  HttpApiSecurity
} from "@effect/platform"
import { NodeHttpServer, NodeRuntime } from "@effect/platform-node"
import { SqlClient } from "@effect/sql"
import { SqliteClient } from "@effect/sql-sqlite-node"
import { Context, Effect, Layer, Redacted, Schema } from "effect"
import { jwtVerify } from "jose"

const port = Number(process.env.PORT ?? 8200)
const key = new TextEncoder().encode(process.env.SECRET ?? "floor-secret-key-with-at-least-32-bytes!")

class CurrentUserId extends Context.Tag("CurrentUserId")() {}

class Bearer extends HttpApiMiddleware.Tag()("Bearer", {
  failure: HttpApiError.Unauthorized,
  provides: CurrentUserId,
  security: { bearer: HttpApiSecurity.bearer }
}) {}

const User = Schema.Struct({ id: Schema.String, email: Schema.String })

const Api = HttpApi.make("reference").add(
  HttpApiGroup.make("reference")
    .add(HttpApiEndpoint.get("hello", "/hello").addSuccess(Schema.Struct({ ok: Schema.Boolean })))
    .add(HttpApiEndpoint.get("me", "/me").addSuccess(User).middleware(Bearer))
)

const BearerLive = Layer.succeed(Bearer, {
  bearer: (token) =>
    Effect.tryPromise({
      try: () => jwtVerify(Redacted.value(token), key, { algorithms: ["HS256"] }),
      catch: () => new HttpApiError.Unauthorized()
    }).pipe(Effect.map(({ payload }) => String(payload.sub)))
})

const Handlers = HttpApiBuilder.group(Api, "reference", (handlers) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    return handlers
      .handle("hello", () => Effect.succeed({ ok: true }))
      .handle("me", () =>
        Effect.gen(function* () {
          const id = yield* CurrentUserId
          const rows = yield* sql`SELECT id, email FROM users WHERE id = ${id}`.pipe(Effect.orDie)
          if (rows.length === 0) return yield* new HttpApiError.Unauthorized()
          return rows[0]
        })
      )
  })
)

const Sqlite = SqliteClient.layer({ filename: process.env.REFERENCE_DB ?? ":memory:" })

const Server = HttpApiBuilder.serve().pipe(
  Layer.provide(HttpApiBuilder.api(Api).pipe(Layer.provide(Handlers), Layer.provide(BearerLive))),
  Layer.provide(Sqlite),
  Layer.provide(NodeHttpServer.layer(createServer, { host: "127.0.0.1", port })),
  Layer.provide(Layer.setTracerEnabled(process.env.TRACER !== "off"))
)

console.log(`effect references listening on ${port}`)
NodeRuntime.runMain(Layer.launch(Server))
