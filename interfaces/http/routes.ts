import * as HttpApi from "@effect/platform/HttpApi"
import type * as HttpApiGroup from "@effect/platform/HttpApiGroup"
import { routePattern } from "./routePattern.js"

/** The route of a path no route serves: one name for all of them, so a scan of random paths adds no metric series. */
export const UNMATCHED = "unmatched"

/** Which methods a path accepts, to tell an unknown route (404) from a wrong method (405). */
export interface RouteTable {
  readonly allowedMethods: (path: string) => ReadonlyArray<string>
  /** The route a path is served by, as declared (`/sessions/:family_id`); none for an unknown path. */
  readonly routeOf: (path: string) => string | undefined
}

/** Every endpoint of the API plus the extra GET routes mounted beside it (docs, OpenAPI). */
export const routeTable = <Id extends string, Groups extends HttpApiGroup.HttpApiGroup.Any, E, R>(
  api: HttpApi.HttpApi<Id, Groups, E, R>,
  extraGetPaths: ReadonlyArray<string>
): RouteTable => {
  const routes: Array<{ readonly method: string; readonly path: string; readonly pattern: RegExp }> = extraGetPaths.map(
    (path) => ({ method: "GET", path, pattern: routePattern(path) })
  )
  HttpApi.reflect(api, {
    onGroup: () => {},
    onEndpoint: ({ endpoint }) =>
      routes.push({ method: endpoint.method, path: endpoint.path, pattern: routePattern(endpoint.path) })
  })
  return {
    allowedMethods: (path) => [...new Set(routes.filter((route) => route.pattern.test(path)).map((r) => r.method))],
    routeOf: (path) => routes.find((route) => route.pattern.test(path))?.path
  }
}
