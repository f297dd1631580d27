import * as HttpApi from "@effect/platform/HttpApi"
import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import * as HttpApiEndpoint from "@effect/platform/HttpApiEndpoint"
import * as HttpApiGroup from "@effect/platform/HttpApiGroup"
import * as HttpServer from "@effect/platform/HttpServer"
import { afterAll, describe, expect, it } from "@effect/vitest"
import { DateTime, Effect, Layer, Option, Schema } from "effect"
import { AccessControl } from "../../application/AccessControl.js"
import { Sessions } from "../../application/Sessions.js"
import { TokenError } from "../../domain/errors.js"
import { Email, User, UserId } from "../../domain/User.js"
import * as RoleRepoSql from "../../infrastructure/sql/RoleRepoSql.js"
import * as SqliteDatabase from "../../infrastructure/sql/SqliteDatabase.js"
import {
  AccessGuard,
  AccessLevel,
  Authentication,
  AuthenticationLive,
  accessGuardLayer,
  CurrentPrincipal,
  RequireVerified,
  requireRoles
} from "../../interfaces/http/AccessLevels.js"

/**
 * How access levels compose, over a Sessions double that counts authentications: stacked levels
 * all apply, in whichever order they are declared, and the token is authenticated once.
 */

class Editors extends requireRoles<Editors>()("test/StackEditors", "editor") {}
class Everyone extends AccessGuard<Everyone>()("test/Everyone", AccessLevel.Authenticated()) {}

const Caller = Schema.Struct({ user_id: Schema.String })
const StackApi = HttpApi.make("stack")
  .add(
    HttpApiGroup.make("outer")
      .add(
        HttpApiEndpoint.get("levelsOutside", "/levels-outside")
          .addSuccess(Caller)
          .middleware(Editors)
          .middleware(RequireVerified)
      )
      .middleware(Authentication)
  )
  .add(
    HttpApiGroup.make("inner")
      .add(HttpApiEndpoint.get("levelsInside", "/levels-inside").addSuccess(Caller))
      .middleware(RequireVerified)
      .middleware(Editors)
      .middleware(Authentication)
  )
  .add(
    HttpApiGroup.make("everyone").add(HttpApiEndpoint.get("anyone", "/anyone").addSuccess(Caller)).middleware(Everyone)
  )

const caller = Effect.map(CurrentPrincipal, (principal) => ({ user_id: principal.user.id }))

const user = (id: string, overrides: Partial<User>) =>
  new User({
    id: UserId.make(id),
    email: Email.make(`${id}@example.com`),
    is_active: true,
    is_verified: false,
    is_superuser: false,
    created_at: DateTime.unsafeMake(0),
    roles: [],
    hashed_password: Option.none(),
    ...overrides
  })

/** Tokens are user ids here; every other Sessions operation is out of scope. */
const users = new Map(
  [
    user("verified-editor", { is_verified: true, roles: ["editor"] }),
    user("unverified-editor", { roles: ["editor"] }),
    user("verified-reader", { is_verified: true, roles: ["reader"] })
  ].map((u) => [u.id as string, u])
)
const counts = { authenticate: 0 }
const unused = () => Effect.die("not used by these tests")
const SessionsDouble = Layer.succeed(
  Sessions,
  Sessions.make({
    authenticate: (token: string) =>
      Effect.suspend(() => {
        counts.authenticate++
        const found = users.get(token)
        return found === undefined
          ? Effect.fail(new TokenError({ message: "A bearer token is required." }))
          : Effect.succeed({
              user: found,
              claims: {
                sub: found.id,
                exp: 0,
                iat: 0,
                jti: token,
                type: "access",
                roles: [],
                extra: {},
                family_id: null,
                iss: "test"
              }
            } as const)
      }),
    start: unused,
    refresh: unused,
    logout: unused,
    end: unused,
    endOthers: unused,
    endAll: unused,
    list: unused,
    restoreRevocations: unused
  } as unknown as Sessions)
)

const { handler, dispose } = HttpApiBuilder.toWebHandler(
  Layer.mergeAll(
    HttpApiBuilder.api(StackApi).pipe(
      Layer.provide([
        HttpApiBuilder.group(StackApi, "outer", (handlers) => handlers.handle("levelsOutside", () => caller)),
        HttpApiBuilder.group(StackApi, "inner", (handlers) => handlers.handle("levelsInside", () => caller)),
        HttpApiBuilder.group(StackApi, "everyone", (handlers) => handlers.handle("anyone", () => caller))
      ]),
      Layer.provide([
        accessGuardLayer(Editors),
        accessGuardLayer(RequireVerified),
        accessGuardLayer(Everyone),
        AuthenticationLive
      ])
    ),
    HttpServer.layerContext
  ).pipe(
    Layer.provide(SessionsDouble),
    Layer.provide(
      AccessControl.Default.pipe(Layer.provide(RoleRepoSql.layer.pipe(Layer.provide(SqliteDatabase.layer(":memory:")))))
    )
  )
)
afterAll(() => dispose())

const get = (path: string, token?: string) =>
  Effect.promise(async () => {
    const before = counts.authenticate
    const response = await handler(
      new Request(`http://local${path}`, { headers: token === undefined ? {} : { authorization: `Bearer ${token}` } })
    )
    const body = (await response.json()) as { code?: string; user_id?: string }
    return { status: response.status, body, authentications: counts.authenticate - before }
  })

describe("stacked access levels", () => {
  for (const path of ["/levels-outside", "/levels-inside"]) {
    it.effect(`${path}: every level applies, and the token is authenticated once`, () =>
      Effect.gen(function* () {
        const admitted = yield* get(path, "verified-editor")
        expect(admitted).toEqual({ status: 200, body: { user_id: "verified-editor" }, authentications: 1 })

        const unverified = yield* get(path, "unverified-editor")
        expect([unverified.status, unverified.body.code]).toEqual([403, "AuthorizationError"])
        const notEditor = yield* get(path, "verified-reader")
        expect([notEditor.status, notEditor.body.code]).toEqual([403, "AuthorizationError"])

        const anonymous = yield* get(path)
        expect([anonymous.status, anonymous.body.code]).toEqual([401, "TokenError"])
        expect(anonymous.authentications).toBe(1)
      })
    )
  }

  it.effect("a level declared by the deployment with AccessGuard works alone", () =>
    Effect.gen(function* () {
      expect(yield* get("/anyone", "unverified-editor")).toMatchObject({ status: 200, authentications: 1 })
      expect((yield* get("/anyone")).status).toBe(401)
    })
  )
})
