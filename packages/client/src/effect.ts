/**
 * @portcullis/client/effect: the Effect client (`make`, `PortcullisApi`, `cookieJar`, the error
 * classes and schemas), made by HttpApiClient from the very HttpApi definition the service
 * serves, bundled in at build time; `effect` and `@effect/platform` are its peer dependencies.
 */
export * from "../../../interfaces/http/client.js"
