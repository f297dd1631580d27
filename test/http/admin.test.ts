import { createServer } from "node:http"
import * as HttpApi from "@effect/platform/HttpApi"
import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import * as HttpApiEndpoint from "@effect/platform/HttpApiEndpoint"
import * as HttpApiGroup from "@effect/platform/HttpApiGroup"
import * as HttpServer from "@effect/platform/HttpServer"
import { NodeHttpServer } from "@effect/platform-node"
import { describe, expect, layer } from "@effect/vitest"
import { Context, Effect, Layer, Redacted, Schema } from "effect"
import { Accounts } from "../../application/Accounts.js"
import { Email } from "../../domain/User.js"
import {
  accessGuardLayer,
  CurrentPrincipal,
  RequireVerified,
  requirePermissions,
  requireRoles
} from "../../interfaces/http/AccessLevels.js"
import { problemResponses } from "../../interfaces/http/middleware.js"
import { pipeline } from "../../interfaces/http/pipeline.js"
import { routeCatalog } from "../../interfaces/http/routes.js"
import { serveRouted } from "../../interfaces/http/server.js"
import { call, expectProblem, me, password, type Session, signIn, signUp, uniqueEmail } from "../support/flows.js"
import * as TestApp from "../support/TestApp.js"

// A deployment's own routes, guarded by Portcullis' access levels: what the admin group changes
// must show on these at the target's next request.
class Editors extends requireRoles<Editors>()("test/Editors", "editor", "chief-editor") {}
class Publishers extends requirePermissions<Publishers>()("test/Publishers", "posts:publish") {}

const Caller = Schema.Struct({ user_id: Schema.String })
const probeGroup = HttpApiGroup.make("probe")
  .add(HttpApiEndpoint.get("editors", "/probe/editors").addSuccess(Caller).middleware(Editors))
  .add(HttpApiEndpoint.get("publishers", "/probe/publishers").addSuccess(Caller).middleware(Publishers))
  .add(
    HttpApiEndpoint.get("verifiedEditors", "/probe/verified-editors")
      .addSuccess(Caller)
      .middleware(Editors)
      .middleware(RequireVerified)
  )
const ProbeApi = HttpApi.make("probe").add(probeGroup)

const caller = Effect.map(CurrentPrincipal, (principal) => ({ user_id: principal.user.id }))
const ProbeHandlers = HttpApiBuilder.group(ProbeApi, "probe", (handlers) =>
  handlers
    .handle("editors", () => caller)
    .handle("publishers", () => caller)
    .handle("verifiedEditors", () => caller)
)

/** The probe API's routes: the one catalog the router is completed with and the pipeline reads. */
const probeRoutes = routeCatalog(ProbeApi)

class Probe extends Context.Tag("test/Probe")<
  Probe,
  { readonly get: (path: string, token?: string) => Effect.Effect<TestApp.Reply> }
>() {}

/**
 * The probe routes on a server of their own, over the same use cases (and so the same store) as
 * the service under test. Fresh, so that its router is not the service's.
 */
const ProbeServer = Layer.fresh(
  Layer.merge(
    serveRouted(probeRoutes, Effect.succeed(pipeline(probeRoutes, [problemResponses]))).pipe(
      Layer.provide(
        HttpApiBuilder.api(ProbeApi).pipe(
          Layer.provide(ProbeHandlers),
          Layer.provide([accessGuardLayer(Editors), accessGuardLayer(Publishers), accessGuardLayer(RequireVerified)])
        )
      )
    ),
    Layer.effect(
      Probe,
      Effect.map(HttpServer.HttpServer, (server) => {
        const origin = `http://127.0.0.1:${(server.address as HttpServer.TcpAddress).port}`
        return {
          get: (path: string, token?: string) =>
            Effect.promise(async () => {
              const response = await fetch(origin + path, {
                headers: token === undefined ? {} : { authorization: `Bearer ${token}` }
              })
              const text = await response.text()
              return {
                status: response.status,
                headers: response.headers,
                text,
                body: text === "" ? undefined : JSON.parse(text)
              }
            })
        }
      })
    )
  ).pipe(Layer.provide(NodeHttpServer.layer(createServer, { host: "127.0.0.1", port: 0 })))
)

/** A superuser made by the operator (as `create-superuser` does), signed in. */
const signUpSuperuser = Effect.gen(function* () {
  const accounts = yield* Accounts
  const email = uniqueEmail("root")
  yield* accounts.createSuperuser(Email.make(email), Redacted.make(password))
  return yield* signIn(email)
})

const post = (path: string, token: string | undefined, json: unknown) =>
  call("POST", path, { json, ...(token === undefined ? {} : { token }) })

const assignRole = (admin: Session, userId: string, role: string) =>
  post("/admin/assign-role", admin.access, { user_id: userId, role })
const removeRole = (admin: Session, userId: string, role: string) =>
  post("/admin/remove-role", admin.access, { user_id: userId, role })
const assignPermission = (admin: Session, role: string, permission: string) =>
  post("/admin/assign-permission", admin.access, { role, permission })
const removePermission = (admin: Session, role: string, permission: string) =>
  post("/admin/remove-permission", admin.access, { role, permission })
const permissionsOf = (token: string | undefined, role: string) =>
  call("GET", `/admin/roles/${role}/permissions`, token === undefined ? {} : { token })

const probe = (path: string, session: Session) => Effect.flatMap(Probe, (server) => server.get(path, session.access))

/** The claims of an access token, read without verifying it: only to show what it says. */
const claimsOf = (token: string) =>
  JSON.parse(Buffer.from(token.split(".")[1] ?? "", "base64url").toString("utf8")) as {
    roles: Array<string>
    permissions?: Array<string>
  }

/** An id of the deployment's form that names nobody. */
const unknownUserId = Effect.map(TestApp.TestApp, ({ settings }) =>
  settings.storage.userIdType === "integer"
    ? "999999999"
    : settings.storage.userIdType === "string"
      ? "NoSuchUser-0000000000"
      : "0190f0c2-0000-7000-8000-00000000dead"
)

/** `user_id` values of the wrong form for the deployment's USER_ID_TYPE. */
const malformedUserIds = Effect.map(TestApp.TestApp, ({ settings }): ReadonlyArray<unknown> => {
  switch (settings.storage.userIdType) {
    case "integer":
      return ["not-a-number", 0, -1, 1.5, "007", "1e3", ""]
    case "string":
      return [42, "has space", ""]
    case "uuid":
      return ["not-a-uuid", 42, "123"]
  }
})

for (const backend of TestApp.backends) {
  describe(`admin routes and access levels (${backend.name})`, () => {
    layer(ProbeServer.pipe(Layer.provideMerge(TestApp.layer(backend))), { excludeTestServices: true })((it) => {
      it.effect("a role granted by a superuser admits the target at their next request, with the same token", () =>
        Effect.gen(function* () {
          const admin = yield* signUpSuperuser
          const target = yield* signUp("target")
          expectProblem(yield* probe("/probe/editors", target), 403, "AuthorizationError")

          const granted = yield* assignRole(admin, target.userId, "chief-editor")
          expect(granted.status).toBe(200)
          expect(granted.body).toEqual({ detail: expect.any(String) })

          const admitted = yield* probe("/probe/editors", target)
          expect(admitted.status).toBe(200)
          expect(admitted.body).toEqual({ user_id: target.userId })
          expect(((yield* me(target.access)).body as { roles: Array<string> }).roles).toEqual(["chief-editor"])
          // The token still says what it said at sign-in: the claim is informational only.
          expect(claimsOf(target.access).roles).toEqual([])
        })
      )

      it.effect("a role removed by a superuser refuses the target at their next request, with the same token", () =>
        Effect.gen(function* () {
          const admin = yield* signUpSuperuser
          const target = yield* signUp("target")
          expect((yield* assignRole(admin, target.userId, "editor")).status).toBe(200)
          const signedInAsEditor = yield* signIn(target.email)
          expect(claimsOf(signedInAsEditor.access).roles).toEqual(["editor"])
          expect((yield* probe("/probe/editors", signedInAsEditor)).status).toBe(200)

          expect((yield* removeRole(admin, target.userId, "editor")).status).toBe(200)
          expectProblem(yield* probe("/probe/editors", signedInAsEditor), 403, "AuthorizationError")
          expectProblem(yield* probe("/probe/editors", target), 403, "AuthorizationError")
          expect(((yield* me(signedInAsEditor.access)).body as { roles: Array<string> }).roles).toEqual([])
        })
      )

      it.effect("a permission granted to a role admits its holders at their next request; removed, refuses them", () =>
        Effect.gen(function* () {
          const admin = yield* signUpSuperuser
          const target = yield* signUp("target")
          const bystander = yield* signUp("bystander")
          const role = `publisher-${target.userId.slice(-6)}`
          expect((yield* assignRole(admin, target.userId, role)).status).toBe(200)
          expectProblem(yield* probe("/probe/publishers", target), 403, "AuthorizationError")

          expect((yield* assignPermission(admin, role, "posts:publish")).status).toBe(200)
          const admitted = yield* probe("/probe/publishers", target)
          expect(admitted.status).toBe(200)
          expect(admitted.body).toEqual({ user_id: target.userId })
          expectProblem(yield* probe("/probe/publishers", bystander), 403, "AuthorizationError")

          expect((yield* removePermission(admin, role, "posts:publish")).status).toBe(200)
          expectProblem(yield* probe("/probe/publishers", target), 403, "AuthorizationError")

          // Granted again, then the role taken away: the permission goes with the role.
          expect((yield* assignPermission(admin, role, "posts:publish")).status).toBe(200)
          expect((yield* probe("/probe/publishers", target)).status).toBe(200)
          expect((yield* removeRole(admin, target.userId, role)).status).toBe(200)
          expectProblem(yield* probe("/probe/publishers", target), 403, "AuthorizationError")
        })
      )

      it.effect("GET /me and a new access token carry the permissions the user's roles grant, each once", () =>
        Effect.gen(function* () {
          const admin = yield* signUpSuperuser
          const target = yield* signUp("permitted")
          const permissionsOfMe = (token: string) =>
            Effect.map(me(token), (reply) => (reply.body as { permissions: Array<string> }).permissions)
          expect(yield* permissionsOfMe(target.access)).toEqual([])
          expect(claimsOf(target.access).permissions).toEqual([])

          const writer = `writer-${target.userId.slice(-6)}`
          const reviewer = `reviewer-${target.userId.slice(-6)}`
          for (const [role, permission] of [
            [writer, "posts:write"],
            [writer, "posts:read"],
            [reviewer, "posts:read"],
            [reviewer, "posts:approve"]
          ] as const) {
            expect((yield* assignPermission(admin, role, permission)).status).toBe(200)
          }
          expect((yield* assignRole(admin, target.userId, writer)).status).toBe(200)
          expect((yield* assignRole(admin, target.userId, reviewer)).status).toBe(200)

          // /me is authoritative: the grant counts at once, with the token signed in before it.
          const union = ["posts:approve", "posts:read", "posts:write"]
          expect(yield* permissionsOfMe(target.access)).toEqual(union)
          expect(claimsOf(target.access).permissions).toEqual([])
          // A new sign-in's token says the same, for information; a refresh issues it again.
          const again = yield* signIn(target.email)
          expect(claimsOf(again.access).permissions).toEqual(union)
          const refreshed = yield* call("POST", "/refresh", { json: { refresh_token: again.refresh } })
          expect(claimsOf((refreshed.body as { access_token: string }).access_token).permissions).toEqual(union)

          expect((yield* removeRole(admin, target.userId, reviewer)).status).toBe(200)
          expect(yield* permissionsOfMe(target.access)).toEqual(["posts:read", "posts:write"])
          // PATCH /me answers the user as GET /me does.
          const patched = yield* call("PATCH", "/me", { token: target.access, json: {} })
          expect((patched.body as { permissions: Array<string> }).permissions).toEqual(["posts:read", "posts:write"])
        })
      )

      it.effect("stacked levels must all pass: a role and a verified email", () =>
        Effect.gen(function* () {
          const admin = yield* signUpSuperuser
          const target = yield* signUp("target")
          expectProblem(yield* probe("/probe/verified-editors", target), 403, "AuthorizationError")
          yield* assignRole(admin, target.userId, "editor")
          const unverified = expectProblem(yield* probe("/probe/verified-editors", target), 403, "AuthorizationError")
          expect(unverified.detail).toContain("verified")
          yield* (yield* Accounts).setFlags(Email.make(target.email), { is_verified: true })
          expect((yield* probe("/probe/verified-editors", target)).status).toBe(200)
        })
      )

      it.effect("a superuser passes role and permission levels without holding them", () =>
        Effect.gen(function* () {
          const admin = yield* signUpSuperuser
          expect((yield* probe("/probe/editors", admin)).status).toBe(200)
          expect((yield* probe("/probe/publishers", admin)).status).toBe(200)
        })
      )

      it.effect("access levels refuse a missing or revoked token with 401, before any role check", () =>
        Effect.gen(function* () {
          const target = yield* signUp("target")
          const server = yield* Probe
          expectProblem(yield* server.get("/probe/editors"), 401, "TokenError")
          expectProblem(yield* server.get("/probe/publishers", "not-a-token"), 401, "TokenError")
          expect((yield* call("POST", "/logout", { token: target.access })).status).toBe(204)
          expectProblem(yield* server.get("/probe/editors", target.access), 401, "TokenBlacklistedError")
        })
      )

      it.effect("every admin route is 403 for a signed-in user who is not a superuser, and changes nothing", () =>
        Effect.gen(function* () {
          const admin = yield* signUpSuperuser
          const user = yield* signUp("user")
          const routes = [
            post("/admin/assign-role", user.access, { user_id: user.userId, role: "editor" }),
            post("/admin/remove-role", user.access, { user_id: user.userId, role: "editor" }),
            post("/admin/assign-permission", user.access, { role: "editor", permission: "posts:publish" }),
            post("/admin/remove-permission", user.access, { role: "editor", permission: "posts:publish" }),
            permissionsOf(user.access, "editor"),
            // Even a bad body: who may call comes before what they sent.
            post("/admin/assign-role", user.access, { user_id: "not-a-uuid" })
          ]
          for (const route of routes) {
            const problem = expectProblem(yield* route, 403, "AuthorizationError")
            expect(problem.detail).toBe("Superuser access is required.")
          }
          expect(((yield* me(user.access)).body as { roles: Array<string> }).roles).toEqual([])
          expect((yield* permissionsOf(admin.access, "editor")).body).toEqual({ role: "editor", permissions: [] })
        })
      )

      it.effect("every admin route is 401 without a token, or with one that is not an access token", () =>
        Effect.gen(function* () {
          const user = yield* signUp("user")
          for (const token of [undefined, "not-a-token", user.refresh]) {
            const replies = [
              yield* post("/admin/assign-role", token, { user_id: user.userId, role: "editor" }),
              yield* post("/admin/remove-role", token, { user_id: user.userId, role: "editor" }),
              yield* post("/admin/assign-permission", token, { role: "editor", permission: "posts:publish" }),
              yield* post("/admin/remove-permission", token, { role: "editor", permission: "posts:publish" }),
              yield* permissionsOf(token, "editor")
            ]
            for (const reply of replies) {
              expectProblem(reply, 401, "TokenError")
              expect(reply.headers.get("www-authenticate")).toBe('Bearer error="invalid_token"')
            }
          }
        })
      )

      it.effect("a superuser whose flag is taken away is refused at their next request", () =>
        Effect.gen(function* () {
          const admin = yield* signUpSuperuser
          expect((yield* permissionsOf(admin.access, "editor")).status).toBe(200)
          yield* (yield* Accounts).setFlags(Email.make(admin.email), { is_superuser: false })
          expectProblem(yield* permissionsOf(admin.access, "editor"), 403, "AuthorizationError")
        })
      )

      it.effect("assign-role and remove-role answer 404 for an unknown user", () =>
        Effect.gen(function* () {
          const admin = yield* signUpSuperuser
          const unknown = yield* unknownUserId
          const assign = expectProblem(yield* assignRole(admin, unknown, "editor"), 404, "UserNotFoundError")
          expect(assign.detail).toBe("No such user.")
          expectProblem(yield* removeRole(admin, unknown, "editor"), 404, "UserNotFoundError")
        })
      )

      it.effect("assign-role is idempotent, creates the role on first use and accepts an upper-case UUID", () =>
        Effect.gen(function* () {
          const admin = yield* signUpSuperuser
          const target = yield* signUp("target")
          // The other spelling of the same id: upper-case for a UUID, the JSON number for an integer.
          const { settings } = yield* TestApp.TestApp
          const spelled = settings.storage.userIdType === "uuid" ? target.userId.toUpperCase() : target.id
          expect((yield* post("/admin/assign-role", admin.access, { user_id: spelled, role: "editor" })).status).toBe(
            200
          )
          expect((yield* assignRole(admin, target.userId, "editor")).status).toBe(200)
          expect((yield* assignRole(admin, target.userId, "admin")).status).toBe(200)
          const roles = ((yield* me(target.access)).body as { roles: Array<string> }).roles
          expect([...roles].sort()).toEqual(["admin", "editor"])
          // Removing a role the user does not hold is no error either.
          expect((yield* removeRole(admin, target.userId, "never-held")).status).toBe(200)
        })
      )

      it.effect("GET /admin/roles/{role}/permissions lists a role's permissions in name order", () =>
        Effect.gen(function* () {
          const admin = yield* signUpSuperuser
          const role = `auditor-${admin.userId.slice(-6)}`
          for (const permission of ["logs:read", "audit:export", "logs:read", "billing:read"]) {
            expect((yield* assignPermission(admin, role, permission)).status).toBe(200)
          }
          const reply = yield* permissionsOf(admin.access, role)
          expect(reply.status).toBe(200)
          expect(reply.body).toEqual({ role, permissions: ["audit:export", "billing:read", "logs:read"] })

          expect((yield* removePermission(admin, role, "billing:read")).status).toBe(200)
          expect((yield* removePermission(admin, role, "never:granted")).status).toBe(200)
          expect((yield* permissionsOf(admin.access, role)).body).toEqual({
            role,
            permissions: ["audit:export", "logs:read"]
          })
        })
      )

      it.effect("an unknown role lists no permissions", () =>
        Effect.gen(function* () {
          const admin = yield* signUpSuperuser
          const reply = yield* permissionsOf(admin.access, "never-used")
          expect(reply.status).toBe(200)
          expect(reply.body).toEqual({ role: "never-used", permissions: [] })
        })
      )

      it.effect("bad bodies and role names are 422 naming the field", () =>
        Effect.gen(function* () {
          const admin = yield* signUpSuperuser
          const target = yield* signUp("target")
          const cases: ReadonlyArray<readonly [string, unknown, string]> = [
            ...(yield* malformedUserIds).flatMap((user_id) => [
              ["/admin/assign-role", { user_id, role: "editor" }, "user_id"] as const,
              ["/admin/remove-role", { user_id, role: "editor" }, "user_id"] as const
            ]),
            ["/admin/assign-role", { user_id: target.userId }, "role"],
            ["/admin/assign-role", { user_id: target.userId, role: "has space" }, "role"],
            ["/admin/assign-role", { user_id: target.userId, role: "" }, "role"],
            ["/admin/assign-role", { user_id: target.userId, role: "x".repeat(65) }, "role"],
            ["/admin/assign-role", { user_id: target.userId, role: "editor", is_superuser: true }, "is_superuser"],
            ["/admin/assign-permission", { role: "editor" }, "permission"],
            ["/admin/assign-permission", { role: "editor", permission: "with space" }, "permission"],
            ["/admin/remove-permission", { role: ["editor"], permission: "posts:publish" }, "role"],
            ["/admin/remove-permission", { role: "editor", permission: "posts:publish", user_id: "x" }, "user_id"]
          ]
          for (const [path, body, field] of cases) {
            const problem = expectProblem(yield* post(path, admin.access, body), 422, "ValidationError")
            expect(problem.errors?.map((error) => error.path)).toContain(field)
          }
          expectProblem(
            yield* call("POST", "/admin/assign-role", {
              raw: "{not json",
              token: admin.access,
              headers: { "content-type": "application/json" }
            }),
            422,
            "ValidationError"
          )
          expectProblem(yield* permissionsOf(admin.access, "has%20space"), 422, "ValidationError")
          expect(((yield* me(target.access)).body as { roles: Array<string> }).roles).toEqual([])
        })
      )

      it.effect("a wrong method on an admin route is 405 with Allow", () =>
        Effect.gen(function* () {
          const admin = yield* signUpSuperuser
          const reply = yield* call("GET", "/admin/assign-role", { token: admin.access })
          expectProblem(reply, 405, "MethodNotAllowedError")
          expect(reply.headers.get("allow")).toBe("POST")
        })
      )

      it.effect("GET /me/verified is 401 without a token, 403 unverified, and 200 once verified, same token", () =>
        Effect.gen(function* () {
          const session = yield* signUp()
          expectProblem(yield* call("GET", "/me/verified"), 401, "TokenError")
          const refused = expectProblem(
            yield* call("GET", "/me/verified", { token: session.access }),
            403,
            "AuthorizationError"
          )
          expect(refused.detail).toBe("The email address is not verified.")
          yield* (yield* Accounts).setFlags(Email.make(session.email), { is_verified: true })
          const reply = yield* call("GET", "/me/verified", { token: session.access })
          expect(reply.status).toBe(200)
          expect(reply.body).toMatchObject({ id: session.id, is_verified: true })
        })
      )

      it.effect("the OpenAPI document shows the admin routes behind the bearer scheme", () =>
        Effect.gen(function* () {
          const document = (yield* call("GET", "/openapi.json")).body as {
            paths: Record<string, Record<string, { security?: unknown; responses: Record<string, unknown> }>>
          }
          const listing = document.paths["/api/v1/auth/admin/roles/{role}/permissions"]?.get
          expect(listing?.security).toEqual([{ bearer: [] }])
          expect(Object.keys(listing?.responses ?? {})).toEqual(expect.arrayContaining(["200", "401", "403", "422"]))
          const assign = document.paths["/api/v1/auth/admin/assign-role"]?.post
          expect(Object.keys(assign?.responses ?? {})).toEqual(expect.arrayContaining(["200", "401", "403", "404"]))
          for (const path of ["remove-role", "assign-permission", "remove-permission"]) {
            expect(document.paths[`/api/v1/auth/admin/${path}`]?.post).toBeDefined()
          }
        })
      )
    })
  })
}
