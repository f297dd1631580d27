import * as HttpApi from "@effect/platform/HttpApi"
import type * as HttpApiEndpoint from "@effect/platform/HttpApiEndpoint"
import type * as HttpApiGroup from "@effect/platform/HttpApiGroup"
import type * as HttpMethod from "@effect/platform/HttpMethod"
import * as OpenApi from "@effect/platform/OpenApi"
import { Context, Schema } from "effect"
import type { RateLimitBucket } from "../../config/sections/limits.js"
import { RateLimitedError, ValidationError } from "../../domain/errors.js"
import { exampleOf } from "../../domain/examples.js"
import type { UserIdType } from "../../domain/User.js"
import { HashingQueueFullError } from "./errors.js"
import { declared } from "./problemSchemas.js"

/**
 * The HttpApi definition: what every group shares. Each group is in features/<name>/group.ts,
 * beside its handlers (handlers.ts). Nothing here or in a group imports a use case or an adapter,
 * so a client (client.ts) builds on the very definitions the server serves.
 */

/** The API's identifier: every feature's group and handlers belong to one API of this name. */
export const API_ID = "portcullis"
export type ApiId = typeof API_ID

/**
 * What shapes a deployment's routes beyond their definitions: the prefix, the login body's
 * field, the refresh body of the token transport, the user id type, and the custom fields its
 * code adds to registration and to PATCH /me.
 */
export interface ApiShape {
  readonly authPrefix: string
  readonly loginField: string
  readonly tokenTransport: "bearer" | "cookie"
  readonly userIdType: UserIdType
  readonly registrationFields: Readonly<Record<string, Schema.Schema.All | Schema.PropertySignature.All>>
  readonly editableFields: Readonly<Record<string, Schema.PropertySignature.All>>
}

/** The routes of a deployment with every default setting and no custom fields. */
export const defaultShape: ApiShape = {
  authPrefix: "/api/v1/auth",
  loginField: "email",
  tokenTransport: "bearer",
  userIdType: "uuid",
  registrationFields: {},
  editableFields: {}
}

/** A request body that refuses fields it does not declare. */
export const strict = <Fields extends Schema.Struct.Fields>(fields: Fields) =>
  Schema.Struct(fields).annotations({ parseOptions: { onExcessProperty: "error" } })

/**
 * A body built at start-up from the deployment's fields (registration, profile, sign-up by mail),
 * as the handlers read it: the fields' schemas are known only at run time, so the compiler cannot
 * give the struct's type, and this is the one place that says what it is.
 */
export const runtimeBody = <A, I>(schema: Schema.Schema.Any): Schema.Schema<A, I> =>
  schema as unknown as Schema.Schema<A, I>

/** Passwords on the wire: redacted at once; the policy judges them, this only bounds them. */
export const PasswordField = Schema.Redacted(Schema.String.pipe(Schema.maxLength(4096)))

export const Message = Schema.Struct({ detail: Schema.String }).annotations({
  identifier: "Message",
  examples: [
    { detail: "The password has been changed; your other sessions have ended." },
    { detail: "If the address belongs to an account, a reset mail is on its way." }
  ]
})
export type Message = typeof Message.Type

/** A list of `item` (a route's answer), its example made of the item's. */
export const listOf = <A, I, R>(item: Schema.Schema<A, I, R>) =>
  Schema.Array(item).annotations({ examples: [[exampleOf(item)]] })

/**
 * The API every feature's group joins: the errors any route may answer are declared here. Even a
 * route that takes no input (GET /healthz, the JWKS) answers 422 to a JSON body sent to it that
 * is nested too deep or holds a NUL: problemResponses judges every body before routing. Groups
 * whose routes touch a store declare its 503 themselves.
 */
export const baseApi = HttpApi.make(API_ID).addError(declared(ValidationError))
type ApiError = typeof baseApi extends HttpApi.HttpApi<ApiId, never, infer E> ? E : never

/** The whole API, whichever groups this deployment serves. */
export type PortcullisApi = HttpApi.HttpApi<ApiId, HttpApiGroup.HttpApiGroup.Any, ApiError>

const isPathSegment = (path: string): path is HttpApiEndpoint.PathSegment => path.startsWith("/")

/** Where a group lives, and how the OpenAPI document presents it. */
export interface GroupPlacement {
  readonly prefix: string
  readonly title: string
  readonly description: string
}

/** A group under its prefix, titled and described for the OpenAPI document. */
export const placed = <Name extends string, Endpoints extends HttpApiEndpoint.HttpApiEndpoint.Any, Error, R>(
  placement: GroupPlacement,
  group: HttpApiGroup.HttpApiGroup<Name, Endpoints, Error, R>
): HttpApiGroup.HttpApiGroup<Name, Endpoints, Error, R> => {
  const described = group.annotate(OpenApi.Title, placement.title).annotate(OpenApi.Description, placement.description)
  return isPathSegment(placement.prefix) ? described.prefix(placement.prefix) : described
}

/** The rate-limit bucket a route counts in, annotated on its endpoint (Feature.ts reads it back). */
export class RateLimitedRoute extends Context.Tag("http/RateLimitedRoute")<RateLimitedRoute, RateLimitBucket>() {}

/** A route that hashes a password for anyone who asks, annotated on its endpoint. */
export class HashingRoute extends Context.Tag("http/HashingRoute")<HashingRoute, true>() {}

/** A route counted in a rate-limit bucket: past the limit it answers 429 RateLimitedError. */
export const limited =
  (bucket: RateLimitBucket) =>
  <Name extends string, Method extends HttpMethod.HttpMethod, Path, UrlParams, Payload, Headers, Success, Error, R, RE>(
    endpoint: HttpApiEndpoint.HttpApiEndpoint<Name, Method, Path, UrlParams, Payload, Headers, Success, Error, R, RE>
  ) =>
    endpoint.addError(declared(RateLimitedError)).annotate(RateLimitedRoute, bucket)

/**
 * A route that hashes a password (sign-in, registration): its queue is bounded
 * (HASHING_QUEUE_LIMIT), and past the bound it answers 503 at once.
 */
export const hashing = <
  Name extends string,
  Method extends HttpMethod.HttpMethod,
  Path,
  UrlParams,
  Payload,
  Headers,
  Success,
  Error,
  R,
  RE
>(
  endpoint: HttpApiEndpoint.HttpApiEndpoint<Name, Method, Path, UrlParams, Payload, Headers, Success, Error, R, RE>
) => endpoint.addError(declared(HashingQueueFullError)).annotate(HashingRoute, true)
