import type * as HttpApi from "@effect/platform/HttpApi"
import type * as HttpApiEndpoint from "@effect/platform/HttpApiEndpoint"
import type * as HttpApiGroup from "@effect/platform/HttpApiGroup"
import type { Redacted } from "effect"
import type { Wire } from "./wire.js"

/**
 * The Promise client's routes, typed from the service's HttpApi definition: one method per
 * endpoint, named as in the Effect client (`auth.login`, `profile.me`, `sessions.revoke`…).
 */

/** The login body carries its identifier under LOGIN_FIELD (`email` by default), not as `identifier`. */
export interface LoginBody {
  readonly password: string
  readonly [loginField: string]: string
}

/** A request part: absent when the route has none, optional when every field of it is. */
type Part<Key extends string, T> = [T] extends [never]
  ? {}
  : {} extends Wire<T>
    ? { readonly [K in Key]?: Wire<T> }
    : null extends T
      ? { readonly [K in Key]?: Wire<T> }
      : { readonly [K in Key]: Wire<T> }

type Payload<T> = [T] extends [never]
  ? {}
  : T extends { readonly identifier: string; readonly password: Redacted.Redacted<string> }
    ? { readonly payload: LoginBody }
    : Part<"payload", T>

/** What a call takes: path parameters, query parameters, the JSON body, extra headers. */
export type Request<Path, UrlParams, Body> = Part<"path", Path> &
  Part<"urlParams", UrlParams> &
  Payload<Body> & { readonly headers?: Readonly<Record<string, string>> }

/** An endpoint's method: resolves with its JSON answer, or with `[answer, Response]` when asked. */
export type Method<Endpoint> =
  Endpoint extends HttpApiEndpoint.HttpApiEndpoint<
    infer _Name,
    infer _Method,
    infer Path,
    infer UrlParams,
    infer Body,
    infer _Headers,
    infer Success,
    infer _Error,
    infer _R,
    infer _RE
  >
    ? {} extends Request<Path, UrlParams, Body>
      ? {
          (request?: Request<Path, UrlParams, Body> & { readonly withResponse?: false }): Promise<Wire<Success>>
          (
            request: Request<Path, UrlParams, Body> & { readonly withResponse: true }
          ): Promise<readonly [Wire<Success>, Response]>
        }
      : {
          (request: Request<Path, UrlParams, Body> & { readonly withResponse?: false }): Promise<Wire<Success>>
          (
            request: Request<Path, UrlParams, Body> & { readonly withResponse: true }
          ): Promise<readonly [Wire<Success>, Response]>
        }
    : never

/** Every group of the API, each with a method per endpoint. */
export type Routes<Api> =
  Api extends HttpApi.HttpApi<infer _Id, infer Groups, infer _Error, infer _R>
    ? {
        readonly [Group in Groups as HttpApiGroup.HttpApiGroup.Name<Group>]: Group extends HttpApiGroup.HttpApiGroup<
          infer _Name,
          infer Endpoints,
          infer _GroupError,
          infer _GroupR,
          infer _TopLevel
        >
          ? { readonly [Endpoint in Endpoints as HttpApiEndpoint.HttpApiEndpoint.Name<Endpoint>]: Method<Endpoint> }
          : never
      }
    : never
