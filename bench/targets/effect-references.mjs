// The Effect references: what Effect 3's HttpApi costs with nothing of ours in it. GET /hello is
// one static route; GET /me is the lean /me (bearer middleware, jose with the key imported once,
// one SELECT through @effect/sql-sqlite-node; no blacklist, family or roles check). POST /login
// and POST /register are the floor's (bench/targets/floor.mjs) written on HttpApi and
// @effect/sql: the same statements, argon2id on libuv's pool and jose tokens, with the body
// decoded and the answer encoded by their schemas; no lockout, audit, transaction or events.
// They show what a sign-in and a registration cost on Effect 3 with nothing of ours in them.
// TRACER=off turns Effect's tracer off.
import { randomUUID } from "node:crypto"
import { createServer } from "node:http"
import * as HttpApi from "@effect/platform/HttpApi"
import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import * as HttpApiEndpoint from "@effect/platform/HttpApiEndpoint"
import * as HttpApiError from "@effect/platform/HttpApiError"
import * as HttpApiGroup from "@effect/platform/HttpApiGroup"
import * as HttpApiMiddleware from "@effect/platform/HttpApiMiddleware"
import * as HttpApiSecurity from "@effect/platform/HttpApiSecurity"
import { NodeHttpServer, NodeRuntime } from "@effect/platform-node"
import { SqlClient } from "@effect/sql"
import { SqliteClient } from "@effect/sql-sqlite-node"
import { hash, verify } from "@node-rs/argon2"
import { Context, Effect, Layer, Redacted, Schema } from "effect"
import { jwtVerify } from "jose"
import { argon, digest, now, publicUser, signToken } from "./floorContract.mjs"

const port = Number(process.env.PORT ?? 8200)
const key = new TextEncoder().encode(process.env.SECRET ?? "floor-secret-key-with-at-least-32-bytes!")

class CurrentUserId extends Context.Tag("CurrentUserId")() {}

class Bearer extends HttpApiMiddleware.Tag()("Bearer", {
  failure: HttpApiError.Unauthorized,
  provides: CurrentUserId,
  security: { bearer: HttpApiSecurity.bearer }
}) {}

const User = Schema.Struct({ id: Schema.String, email: Schema.String })

const Credentials = Schema.Struct({ email: Schema.String, password: Schema.String })
const PublicUser = Schema.Struct({
  id: Schema.String,
  email: Schema.String,
  is_active: Schema.Boolean,
  is_verified: Schema.Boolean,
  is_superuser: Schema.Boolean,
  created_at: Schema.String,
  roles: Schema.Array(Schema.String)
})
const Login = Schema.Struct({
  access_token: Schema.String,
  refresh_token: Schema.String,
  token_type: Schema.Literal("bearer"),
  expires_in: Schema.Number,
  user: PublicUser
})

const Api = HttpApi.make("reference").add(
  HttpApiGroup.make("reference")
    .add(HttpApiEndpoint.get("hello", "/hello").addSuccess(Schema.Struct({ ok: Schema.Boolean })))
    .add(HttpApiEndpoint.get("me", "/me").addSuccess(User).middleware(Bearer))
    .add(
      HttpApiEndpoint.post("register", "/register")
        .setPayload(Credentials)
        .addSuccess(Schema.Struct({ detail: Schema.String }), { status: 202 })
    )
    .add(
      HttpApiEndpoint.post("login", "/login")
        .setPayload(Credentials)
        .addSuccess(Login)
        .addError(HttpApiError.Unauthorized)
    )
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
    // As the floor and Portcullis commit: the log synced at each commit.
    yield* sql`PRAGMA synchronous = FULL`
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
      .handle("register", ({ payload }) =>
        Effect.gen(function* () {
          const hashed = yield* Effect.promise(() => hash(payload.password, argon))
          yield* sql`INSERT INTO users VALUES (${randomUUID()}, ${payload.email.trim().toLowerCase()}, ${hashed}, 1, 0, 0, ${Date.now()})
            ON CONFLICT(email) DO UPDATE SET email = excluded.email`.pipe(Effect.orDie)
          return { detail: "Check your mail." }
        })
      )
      .handle("login", ({ payload }) =>
        Effect.gen(function* () {
          const [user] = yield* sql`SELECT * FROM users WHERE email = ${payload.email.trim().toLowerCase()}`.pipe(
            Effect.orDie
          )
          if (user === undefined || !(yield* Effect.promise(() => verify(user.hashed_password, payload.password)))) {
            return yield* new HttpApiError.Unauthorized()
          }
          const familyId = randomUUID()
          yield* sql`INSERT INTO families (id, user_id) VALUES (${familyId}, ${user.id})`.pipe(Effect.orDie)
          const iat = now()
          const [access, refresh] = yield* Effect.promise(() =>
            Promise.all([
              signToken(key, { type: "access", family_id: familyId, roles: [] }, user.id, iat, 900),
              signToken(key, { type: "refresh", family_id: familyId }, user.id, iat, 30 * 86400)
            ])
          )
          yield* sql`INSERT INTO refresh_tokens (digest, family_id, user_id, expires_at)
            VALUES (${digest(refresh)}, ${familyId}, ${user.id}, ${(iat + 30 * 86400) * 1000})`.pipe(Effect.orDie)
          const roles = yield* sql`SELECT role FROM user_roles WHERE user_id = ${user.id}`.pipe(Effect.orDie)
          return {
            access_token: access,
            refresh_token: refresh,
            token_type: "bearer",
            expires_in: 900,
            user: publicUser(user, roles)
          }
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
