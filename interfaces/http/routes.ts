import { HttpApi } from "@effect/platform"

/** Which methods a path accepts, to tell an unknown route (404) from a wrong method (405). */
export interface RouteTable {
  readonly allowedMethods: (path: string) => ReadonlyArray<string>
}

const toPattern = (path: string) =>
  new RegExp(`^${path.replace(/[.*+?^${}()|[\]\\]/g, "\\$&").replace(/\\:|:[A-Za-z_][A-Za-z0-9_]*/g, "[^/]+")}$`)

/** Every endpoint of the API plus the extra GET routes mounted beside it (docs, OpenAPI). */
export const routeTable = (api: HttpApi.HttpApi.Any, extraGetPaths: ReadonlyArray<string>): RouteTable => {
  const routes: Array<{ readonly method: string; readonly pattern: RegExp }> = extraGetPaths.map((path) => ({
    method: "GET",
    pattern: toPattern(path)
  }))
  HttpApi.reflect(api as HttpApi.HttpApi.AnyWithProps, {
    onGroup: () => {},
    onEndpoint: ({ endpoint }) => routes.push({ method: endpoint.method, pattern: toPattern(endpoint.path) })
  })
  return {
    allowedMethods: (path) => [...new Set(routes.filter((route) => route.pattern.test(path)).map((r) => r.method))]
  }
}
