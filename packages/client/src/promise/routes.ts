import type * as HttpApi from "@effect/platform/HttpApi"
import type * as HttpApiEndpoint from "@effect/platform/HttpApiEndpoint"
import type * as HttpApiGroup from "@effect/platform/HttpApiGroup"
import type { Wire } from "./wire.js"

/**
 * The Promise client's routes, typed from the service's HttpApi definition: one method per
 * endpoint, named as in the Effect client (`auth.login`, `profile.me`, `sessions.revoke`…).
 * Every import here is a type: the definition shapes the types and never reaches a bundle.
 */

/**
 * What a deployment changes in the request bodies, told to `createClient` as a type (or, for
 * the login field and token transport, as values of `shape`). A body then takes exactly these
 * fields: an unknown key, a typo among them, is a type error.
 */
export interface Deployment {
  /** LOGIN_FIELD: the login body's identifier (`email` unless told). */
  readonly loginField?: string
  /** TOKEN_TRANSPORT: in cookie mode a refresh sends no body. */
  readonly tokenTransport?: "bearer" | "cookie"
  /** The JSON types of the deployment's registration fields (register, and sign-up by mail). */
  readonly registrationFields?: object
  /** The JSON types of the fields PATCH /me may change. */
  readonly editableFields?: object
}

type LoginFieldOf<D> = D extends { readonly loginField: infer Field extends string } ? Field : "email"
type Fields<D, Key extends "registrationFields" | "editableFields"> = D extends { readonly [K in Key]: infer F }
  ? F
  : {}

/** A PATCH body: any of the fields; none at all when the deployment has none (`{}` would take anything). */
type Patch<F> = [keyof F] extends [never] ? { readonly [key: string]: never } : Partial<F>

/** The bodies whose fields the deployment decides, by group and endpoint, as the wire takes them. */
interface Bodies<D> {
  readonly auth: {
    readonly login: { readonly [K in LoginFieldOf<D>]: string } & { readonly password: string }
    readonly register: { readonly email: string; readonly password: string } & Fields<D, "registrationFields">
    /** Without a body the client spends the token of its session (client.refresh). */
    readonly refresh:
      | (D extends { readonly tokenTransport: "cookie" }
          ? { readonly refresh_token?: string }
          : { readonly refresh_token: string })
      | null
  }
  readonly emailSignIn: { readonly request: { readonly email: string } & Fields<D, "registrationFields"> }
  readonly profile: { readonly updateMe: Patch<Fields<D, "editableFields">> }
}

/** The body of one endpoint: the deployment's where it decides it, else the definition's. */
type Body<D, Group, Name, Decoded> = Group extends keyof Bodies<D>
  ? Name extends keyof Bodies<D>[Group]
    ? Bodies<D>[Group][Name]
    : Wire<Decoded>
  : Wire<Decoded>

/** A request part (already in wire form): absent when the route has none, optional when every field of it is. */
type Part<Key extends string, T> = [T] extends [never]
  ? {}
  : {} extends T
    ? { readonly [K in Key]?: T }
    : null extends T
      ? { readonly [K in Key]?: T }
      : { readonly [K in Key]: T }

/** What a call takes: path parameters, query parameters, the JSON body, extra headers. */
export type Request<Path, UrlParams, Body> = Part<"path", Wire<Path>> &
  Part<"urlParams", Wire<UrlParams>> &
  Part<"payload", Body> & { readonly headers?: Readonly<Record<string, string>> }

type Call<R, Success> = {} extends R
  ? {
      (request?: R & { readonly withResponse?: false }): Promise<Wire<Success>>
      (request: R & { readonly withResponse: true }): Promise<readonly [Wire<Success>, Response]>
    }
  : {
      (request: R & { readonly withResponse?: false }): Promise<Wire<Success>>
      (request: R & { readonly withResponse: true }): Promise<readonly [Wire<Success>, Response]>
    }

/** An endpoint's method: resolves with its JSON answer, or with `[answer, Response]` when asked. */
export type Method<Group, Endpoint, D> =
  Endpoint extends HttpApiEndpoint.HttpApiEndpoint<
    infer Name,
    infer _Method,
    infer Path,
    infer UrlParams,
    infer Payload,
    infer _Headers,
    infer Success,
    infer _Error,
    infer _R,
    infer _RE
  >
    ? Call<Request<Path, UrlParams, [Payload] extends [never] ? never : Body<D, Group, Name, Payload>>, Success>
    : never

/** Every group of the API, each with a method per endpoint. */
export type Routes<Api, D = {}> =
  Api extends HttpApi.HttpApi<infer _Id, infer Groups, infer _Error, infer _R>
    ? {
        readonly [Group in Groups as HttpApiGroup.HttpApiGroup.Name<Group>]: Group extends HttpApiGroup.HttpApiGroup<
          infer GroupName,
          infer Endpoints,
          infer _GroupError,
          infer _GroupR,
          infer _TopLevel
        >
          ? {
              readonly [Endpoint in Endpoints as HttpApiEndpoint.HttpApiEndpoint.Name<Endpoint>]: Method<
                GroupName,
                Endpoint,
                D
              >
            }
          : never
      }
    : never
