import * as HttpApi from "@effect/platform/HttpApi"
import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import type * as HttpApiEndpoint from "@effect/platform/HttpApiEndpoint"
import type * as HttpApiGroup from "@effect/platform/HttpApiGroup"
import * as OpenApi from "@effect/platform/OpenApi"
import { Context, Layer, Option, Schema } from "effect"
import { type Deployment, profileRules } from "../../config/Deployment.js"
import { packageVersion } from "../../config/packageVersion.js"
import type { Settings } from "../../config/Settings.js"
import { type ApiShape, baseApi, defaultShape, HashingRoute, type PortcullisApi, RateLimitedRoute } from "./Api.js"
import { type DocumentOptions, documentProblems } from "./openapi.js"
import { problemSchema } from "./problemSchemas.js"
import { type ProblemCode, requestProblems } from "./problems.js"
import type { LimitedRoute, RouteKind } from "./routes.js"

const requestProblemCodes = Object.keys(requestProblems) as Array<ProblemCode>

export { API_ID, type ApiId } from "./Api.js"

export type { LimitedRoute } from "./routes.js"

/** What shapes a feature's routes: the settings and the deployment's code. */
export interface FeatureContext {
  readonly settings: Settings
  readonly deployment: Deployment
}

/** The deployment's shape of the routes: its settings, and the custom fields its code declares. */
export const shapeOf = ({ settings, deployment }: FeatureContext): ApiShape => {
  const rules = profileRules(settings.accounts.loginField, deployment)
  const registrationFields: Record<string, ApiShape["registrationFields"][string]> = {}
  for (const name of rules.registrationFields ?? []) {
    const schema = rules.schemas?.get(name)
    if (schema === undefined) continue
    registrationFields[name] = rules.requiredFields?.has(name) ? schema : Schema.optionalWith(schema, { exact: true })
  }
  const editableFields: Record<string, ApiShape["editableFields"][string]> = {}
  for (const name of rules.editableFields) {
    const schema = rules.schemas?.get(name)
    if (schema !== undefined) editableFields[name] = Schema.optionalWith(schema, { exact: true })
  }
  return {
    authPrefix: settings.server.authPrefix,
    loginField: settings.accounts.loginField,
    tokenTransport: settings.cookies.tokenTransport,
    userIdType: settings.storage.userIdType,
    registrationFields,
    editableFields
  }
}

/**
 * The limited routes of a group, as its endpoints declare them (`limited`, `hashing` in Api.ts),
 * their paths without the auth prefix.
 */
export const limitedRoutes = <Group extends HttpApiGroup.HttpApiGroup.Any>(
  define: (shape: ApiShape) => Group
): ReadonlyArray<LimitedRoute> => {
  const routes: Array<LimitedRoute> = []
  HttpApi.reflect(HttpApi.make("limits").add(define({ ...defaultShape, authPrefix: "" })), {
    onGroup: () => {},
    onEndpoint: ({ endpoint }) => {
      const bucket = Context.getOption(endpoint.annotations, RateLimitedRoute)
      if (Option.isNone(bucket)) return
      const hashes = Option.isSome(Context.getOption(endpoint.annotations, HashingRoute))
      routes.push({
        bucket: bucket.value,
        method: endpoint.method,
        path: endpoint.path,
        ...(hashes ? { hashes } : {})
      })
    }
  })
  return routes
}

/**
 * A feature's HttpApi group, under the auth prefix, and the layer of the group's handlers, which
 * register the group's routes. The handlers' service is not named here: the assembled API's
 * groups vary with the deployment, so it asks for none by type (each group is paired with its
 * handlers instead).
 */
export interface FeatureApi<R> {
  readonly group: HttpApiGroup.HttpApiGroup.Any
  readonly handlers: Layer.Layer<never, never, R>
  /** Routes served beside the API that answer in their own way (the provider's), by path. */
  readonly kinds?: ReadonlyMap<string, RouteKind>
  /** The Content-Security-Policy of the routes that are its pages, by path. */
  readonly policies?: ReadonlyMap<string, string>
}

type ApiError = typeof baseApi extends HttpApi.HttpApi<string, never, infer E> ? E : never

/**
 * A group and its handlers, built against an API holding just that group (the same identifier
 * and errors as the whole API): handlers register their routes themselves, so each feature can
 * be served or left out without the others knowing.
 */
export const featureApi = <
  Name extends string,
  Endpoints extends HttpApiEndpoint.HttpApiEndpoint.Any,
  Error,
  R,
  TopLevel extends boolean,
  Return
>(
  group: HttpApiGroup.HttpApiGroup<Name, Endpoints, Error, R, TopLevel>,
  build: (
    handlers: HttpApiBuilder.Handlers.FromGroup<
      ApiError,
      never,
      HttpApiGroup.HttpApiGroup<Name, Endpoints, Error, R, TopLevel>
    >
  ) => HttpApiBuilder.Handlers.ValidateReturn<Return>
) => ({ group, handlers: HttpApiBuilder.group(baseApi.add(group), group.identifier, build) })

/**
 * The API of the groups served, titled, with the OpenAPI document made to tell what the service
 * answers, at PUBLIC_URL.
 */
export const assembleApi = (
  parts: ReadonlyArray<FeatureApi<unknown>>,
  options: Pick<DocumentOptions, "globallyLimited" | "originChecked"> & { readonly publicUrl: URL }
): PortcullisApi => {
  let api: PortcullisApi = baseApi
  for (const part of parts) api = api.add(part.group)
  return api
    .annotate(OpenApi.Title, "Portcullis")
    .annotate(OpenApi.Description, "Authentication and account service.")
    .annotate(HttpApi.AdditionalSchemas, requestProblemCodes.map(problemSchema))
    .annotate(
      OpenApi.Transform,
      documentProblems({
        version: packageVersion,
        publicUrl: options.publicUrl.origin,
        globallyLimited: options.globallyLimited,
        originChecked: options.originChecked
      })
    )
}

/**
 * A feature of the service (auth, profile, verify, sessions, admin, oauth, passkey, email-sign-in,
 * email-change, jwks): everything that serves it over HTTP, in one value
 * (features/<name>/handlers.ts over its group in group.ts), registered in the composition root's table of features. Adding a limited route
 * is a change to its group alone; adding a feature, to its folder, the table and the client
 * (docs/contributing.md, "Adding a feature").
 */
export interface Feature<Name extends string, R> {
  /** The route group's name, as a deployment's `routeGroups` names it. */
  readonly name: Name
  /** Served whatever the deployment's `routeGroups` say, for the reason given here. */
  readonly required?: string
  /**
   * The routes a rate-limit bucket counts. They count while the deployment keeps the group, its
   * settings turning it on or not; a group left out of `routeGroups` has no limits.
   */
  readonly limits: ReadonlyArray<LimitedRoute>
  /**
   * Whether its settings (or what the deployment's code adds) turn it on; the deployment's
   * `routeGroups` decide too. On by default.
   */
  readonly enabled?: (settings: Settings, deployment: Deployment) => boolean
  /** What its settings ask for that this build cannot honour yet: start-up refuses it, one line each. */
  readonly unsupported?: (settings: Settings) => ReadonlyArray<string>
  /** Its group and handlers, shaped by the settings and the deployment. */
  readonly api: (context: FeatureContext) => FeatureApi<R>
}

/** A feature, its types inferred from its definition. */
export const feature = <Name extends string, R>(definition: Feature<Name, R>): Feature<Name, R> => definition

/**
 * A feature whose handlers are given use cases of its own, built only while it is served. Which
 * ones is the composition root's to say (composition/features.ts).
 */
export const withUseCases = <Name extends string, R, A, RU>(
  definition: Feature<Name, R>,
  useCases: Layer.Layer<A, never, RU>
): Feature<Name, Exclude<R, A> | RU> => ({
  ...definition,
  api: (context) => {
    const part = definition.api(context)
    return { ...part, handlers: Layer.provide(part.handlers, useCases) }
  }
})
