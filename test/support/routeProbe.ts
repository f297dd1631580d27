import * as HttpApi from "@effect/platform/HttpApi"
import type * as HttpApiGroup from "@effect/platform/HttpApiGroup"
import * as HttpApp from "@effect/platform/HttpApp"
import * as HttpRouter from "@effect/platform/HttpRouter"
import * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import { Effect } from "effect"
import { type LimitedRoute, type ResolvedRoute, routeCatalog } from "../../interfaces/http/routes.js"

/**
 * The routes of `api` (and GET `extraGetPaths` beside them) on the platform's router, completed as
 * the service completes it, every route answering the route the pipeline would read for the
 * request: what a request to `target` resolves to, through the router itself.
 */
export const routeProbe = <Id extends string, Groups extends HttpApiGroup.HttpApiGroup.Any, E, R>(
  api: HttpApi.HttpApi<Id, Groups, E, R>,
  sources: {
    readonly limits?: { readonly prefix: string; readonly routes: ReadonlyArray<LimitedRoute> }
    readonly extraGetPaths?: ReadonlyArray<string>
  } = {}
) => {
  const catalog = routeCatalog(api, sources.limits === undefined ? {} : { limits: sources.limits })
  const served = HttpServerResponse.empty()
  let router: HttpRouter.HttpRouter = HttpRouter.empty
  HttpApi.reflect(api, {
    onGroup: () => {},
    onEndpoint: ({ endpoint }) => {
      router = HttpRouter.route(endpoint.method)(endpoint.path, Effect.succeed(served))(router)
    }
  })
  for (const path of sources.extraGetPaths ?? []) {
    router = HttpRouter.get(router, path as HttpRouter.PathInput, Effect.succeed(served))
  }
  const app = Effect.runSync(
    HttpRouter.toHttpApp(
      HttpRouter.use(catalog.complete(router), () =>
        Effect.map(Effect.all([HttpRouter.RouteContext, HttpServerRequest.HttpServerRequest]), ([context, request]) =>
          // In a header: a HEAD request's answer has no body.
          HttpServerResponse.empty({
            headers: { "x-route": JSON.stringify(catalog.resolve(request.method, request.url, context.route)) }
          })
        )
      )
    )
  )
  const handler = HttpApp.toWebHandler(app)
  return async (method: string, target: string): Promise<ResolvedRoute> => {
    const response = await handler(new Request(`http://localhost${target}`, { method }))
    return JSON.parse(response.headers.get("x-route") ?? "null") as ResolvedRoute
  }
}
