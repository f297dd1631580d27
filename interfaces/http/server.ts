import { HttpApiBuilder, HttpApiSwagger } from "@effect/platform"
import { Layer } from "effect"
import { makeApi } from "./Api.js"
import { AuthenticationLive } from "./Authentication.js"
import { AuthHandlers } from "./handlers/auth.js"
import { HealthHandlers } from "./handlers/health.js"
import { ProfileHandlers } from "./handlers/profile.js"
import { problemResponses, responseHeaders } from "./middleware.js"
import { type ProtectionSettings, protections } from "./protections.js"
import { routeTable } from "./routes.js"

export interface HttpOptions extends ProtectionSettings {
  readonly authPrefix: string
  readonly loginField: string
  readonly publicUrl: URL
}

/**
 * The HTTP application: the API with its handlers, the OpenAPI document and docs page under
 * the auth prefix, the problem renderer and the security headers. Needs the use cases and an
 * HttpServer.
 */
export const httpLayer = (options: HttpOptions) => {
  const api = makeApi(options)
  const docsPath = `${options.authPrefix}/docs`
  const openApiPath = `${options.authPrefix}/openapi.json`
  const ApiLive = HttpApiBuilder.api(api).pipe(
    Layer.provide([AuthHandlers(api), ProfileHandlers(api), HealthHandlers(api)]),
    Layer.provide(AuthenticationLive)
  )
  return HttpApiBuilder.serve(responseHeaders({ hsts: options.publicUrl.protocol === "https:", docsPath })).pipe(
    Layer.provide(HttpApiSwagger.layer({ path: docsPath as `/${string}` })),
    Layer.provide(HttpApiBuilder.middlewareOpenApi({ path: openApiPath as `/${string}` })),
    // Layers build bottom-up and each middleware wraps the ones added before it: this one wraps
    // problemResponses, so a request is counted before any body check (test/http/rate-limits).
    Layer.provide(HttpApiBuilder.middleware(protections(options))),
    Layer.provide(HttpApiBuilder.middleware(problemResponses(routeTable(api, [docsPath, openApiPath])))),
    Layer.provide(ApiLive)
  )
}
