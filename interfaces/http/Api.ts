import { HttpApi, HttpApiBuilder, type HttpApiEndpoint, type HttpApiGroup, OpenApi } from "@effect/platform"
import { Layer, Schema } from "effect"
import { StoreUnavailableError } from "../../application/ports/StoreUnavailableError.js"
import { ValidationError } from "../../domain/errors.js"
import { API_ID, type ApiId, type FeatureApi } from "./Feature.js"
import { documentValidationProblems } from "./openapi.js"
import { declared } from "./problems.js"

/** A request body that refuses fields it does not declare. */
export const strict = <Fields extends Schema.Struct.Fields>(fields: Fields) =>
  Schema.Struct(fields).annotations({ parseOptions: { onExcessProperty: "error" } })

/** Passwords on the wire: redacted at once; the policy judges them, this only bounds them. */
export const PasswordField = Schema.Redacted(Schema.String.pipe(Schema.maxLength(4096)))

export const Message = Schema.Struct({ detail: Schema.String }).annotations({ identifier: "Message" })
export type Message = typeof Message.Type

/** The API every feature's group joins: the errors any route may answer are declared here. */
const baseApi = HttpApi.make(API_ID).addError(declared(ValidationError)).addError(declared(StoreUnavailableError))
type ApiError = typeof baseApi extends HttpApi.HttpApi<ApiId, never, infer E> ? E : never

/** The whole API, whichever groups this deployment serves. */
export type PortcullisApi = HttpApi.HttpApi<ApiId, HttpApiGroup.HttpApiGroup.Any, ApiError>

const isPathSegment = (path: string): path is HttpApiEndpoint.PathSegment => path.startsWith("/")

/** Where a feature's group lives, and how the OpenAPI document presents it. */
export interface GroupPlacement {
  readonly prefix: string
  readonly title: string
  readonly description: string
}

/**
 * A feature's group under its prefix, titled and described for the OpenAPI document, and its
 * handlers, built against an API holding just that group (the same identifier and errors as the
 * whole API): handlers register their routes themselves, so each feature can be served or left
 * out without the others knowing.
 */
export const featureApi = <
  Name extends string,
  Endpoints extends HttpApiEndpoint.HttpApiEndpoint.Any,
  Error,
  R,
  TopLevel extends boolean,
  Return
>(
  placement: GroupPlacement,
  group: HttpApiGroup.HttpApiGroup<Name, Endpoints, Error, R, TopLevel>,
  build: (
    handlers: HttpApiBuilder.Handlers.FromGroup<
      ApiError,
      never,
      HttpApiGroup.HttpApiGroup<Name, Endpoints, Error, R, TopLevel>
    >
  ) => HttpApiBuilder.Handlers.ValidateReturn<Return>
) => {
  const described = group.annotate(OpenApi.Title, placement.title).annotate(OpenApi.Description, placement.description)
  const prefixed = isPathSegment(placement.prefix) ? described.prefix(placement.prefix) : described
  return { group: prefixed, handlers: HttpApiBuilder.group(baseApi.add(prefixed), prefixed.identifier, build) }
}

/** A feature's API with the use cases of its own built into its handlers. */
export const withUseCases = <R, A, RU>(
  part: FeatureApi<R>,
  useCases: Layer.Layer<A, never, RU>
): FeatureApi<Exclude<R, A> | RU> => ({ group: part.group, handlers: Layer.provide(part.handlers, useCases) })

/** The API of the groups served, plus the health group at the root, for load balancers. */
export const assembleApi = (parts: ReadonlyArray<FeatureApi<unknown>>): PortcullisApi => {
  let api: PortcullisApi = baseApi
  for (const part of parts) api = api.add(part.group)
  return api
    .annotate(OpenApi.Title, "Portcullis")
    .annotate(OpenApi.Description, "Authentication and account service.")
    .annotate(OpenApi.Transform, documentValidationProblems)
}
