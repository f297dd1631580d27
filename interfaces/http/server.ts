import { HttpApiBuilder, HttpApiSwagger } from "@effect/platform"
import { Layer, type Option } from "effect"
import { type Deployment, exposedGroups } from "../../config/Deployment.js"
import type { UserIdType } from "../../domain/User.js"
import { AccessGuardsLive } from "./AccessLevels.js"
import { makeApi } from "./Api.js"
import { AuthenticationLive } from "./Authentication.js"
import { SessionTransport } from "./cookies.js"
import { cors } from "./cors.js"
import { AdminHandlers } from "./handlers/admin.js"
import { AuthHandlers } from "./handlers/auth.js"
import { HealthHandlers } from "./handlers/health.js"
import { ProfileHandlers } from "./handlers/profile.js"
import { SessionsHandlers } from "./handlers/sessions.js"
import { VerifyHandlers } from "./handlers/verify.js"
import { problemResponses, responseHeaders } from "./middleware.js"
import { type ProtectionSettings, protections } from "./protections.js"
import { routeTable } from "./routes.js"

export interface HttpOptions extends ProtectionSettings {
  readonly authPrefix: string
  readonly loginField: string
  /** USER_ID_TYPE: the form of the admin routes' `user_id`. */
  readonly userIdType?: UserIdType
  readonly publicUrl: URL
  readonly tokenTransport: "bearer" | "cookie"
  readonly cookieSecure: boolean
  readonly cookieSameSite: "lax" | "strict" | "none"
  readonly cookieDomain: Option.Option<string>
  readonly corsOrigins: ReadonlyArray<string>
}

/**
 * The HTTP application: the API with its handlers, the OpenAPI document and docs page under
 * the auth prefix, the problem renderer, the security headers and CORS. Needs the use cases
 * and an HttpServer.
 */
export const httpLayer = (options: HttpOptions, deployment: Deployment = {}) => {
  const api = makeApi({ ...options, deployment })
  const exposed = exposedGroups(deployment)
  const all = Layer.mergeAll(
    AuthHandlers(api),
    ProfileHandlers(api),
    VerifyHandlers(api),
    SessionsHandlers(api),
    AdminHandlers(api),
    HealthHandlers(api)
  )
  const optional = [
    ["profile", ProfileHandlers(api)],
    ["verify", VerifyHandlers(api)],
    ["sessions", SessionsHandlers(api)],
    ["admin", AdminHandlers(api)]
  ] as const
  // Handlers only for the groups the API holds: a left-out group's routes do not exist.
  const handlers = Layer.mergeAll(
    AuthHandlers(api),
    HealthHandlers(api),
    ...optional.filter(([name]) => exposed.has(name)).map(([, layer]) => layer)
  ) as unknown as typeof all
  const docsPath = `${options.authPrefix}/docs`
  const openApiPath = `${options.authPrefix}/openapi.json`
  const routes = routeTable(api, [docsPath, openApiPath])
  const ApiLive = HttpApiBuilder.api(api).pipe(
    Layer.provide(handlers),
    Layer.provide(AccessGuardsLive),
    Layer.provide(AuthenticationLive),
    Layer.provide(SessionTransport.layer(options))
  )
  return HttpApiBuilder.serve(responseHeaders({ hsts: options.publicUrl.protocol === "https:", docsPath })).pipe(
    Layer.provide(HttpApiSwagger.layer({ path: docsPath as `/${string}` })),
    Layer.provide(HttpApiBuilder.middlewareOpenApi({ path: openApiPath as `/${string}` })),
    // Layers build bottom-up and each middleware wraps the ones added before it: this one wraps
    // problemResponses, so a request is counted before any body check (test/http/rate-limits).
    Layer.provide(HttpApiBuilder.middleware(protections(options))),
    Layer.provide(HttpApiBuilder.middleware(problemResponses(routes))),
    // An API middleware, not a serve one: its preflight answers still get the security headers.
    Layer.provide(HttpApiBuilder.middleware(cors({ origins: options.corsOrigins, routes }))),
    Layer.provide(ApiLive)
  )
}
