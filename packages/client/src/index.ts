/**
 * @portcullis/client: the clients of a Portcullis service.
 *
 * - The Effect client (`make`, `PortcullisApi`, `cookieJar`, the error classes and schemas): made
 *   by HttpApiClient from the very HttpApi definition the service serves, bundled in at build time.
 * - The Promise client (`createClient`), for apps that do not use Effect: the same routes, plain
 *   JSON in and out (ISO date strings), failures thrown as `PortcullisError`.
 */
export * from "../../../interfaces/http/client.js"
export { createClient, type PromiseClient, type PromiseClientOptions } from "./promise/client.js"
export { PortcullisError } from "./promise/errors.js"
export type { Wire } from "./promise/wire.js"
