/**
 * @portcullis/client: the Promise client of a Portcullis service, for browsers and Node.
 *
 * `createClient` calls the service with fetch alone: no runtime dependency, every route from a
 * table made from the service's HttpApi definition, plain JSON in and out (ISO date strings),
 * refusals thrown as `PortcullisError`. Its types are the definition's, imported as types only.
 * The Effect client is `@portcullis/client/effect`; the resource-server helper
 * `@portcullis/client/resource-server`.
 */
export { createClient, type PromiseClient, type PromiseClientOptions, type Session } from "./promise/client.js"
export { type ErrorCode, PortcullisError, type ProblemBody } from "./promise/errors.js"
export type { Deployment } from "./promise/routes.js"
export type { Wire } from "./promise/wire.js"
