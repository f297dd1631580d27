/**
 * Portcullis in code: compose the service into an application instead of running the CLI.
 *
 * ```ts
 * import { application, httpLayer, parseSettings, type Deployment } from "portcullis"
 * const { settings } = Either.getOrThrow(parseSettings(process.env))
 * const App = application(settings, resolveSecretKey(settings), deployment)
 * const Http = httpLayer(settings, deployment) // then provide an HttpServer and App
 * ```
 */

export { AccessControl } from "./application/AccessControl.js"
export { Accounts, Registration } from "./application/Accounts.js"
export { AuthPolicy } from "./application/AuthPolicy.js"
export { Sessions } from "./application/Sessions.js"
export { type ClientInfo, type Principal, Tokens } from "./application/Tokens.js"
export {
  type Deployment,
  deploymentProblems,
  type EventHandlers,
  type JsonObject,
  type PasswordPolicyOptions,
  type RegistrationFields,
  type RouteGroupName,
  routeGroupNames,
  type UserFieldSchema,
  type UserJson
} from "./config/Deployment.js"
export { parseSettings, type ResolvedSettings, type Settings } from "./config/Settings.js"
export {
  application,
  authPolicy,
  notYetSupported,
  ports,
  resolveSecretKey,
  restoreRevocations,
  useCases
} from "./infrastructure/layers.js"
export {
  AccessGuard,
  AccessGuardsLive,
  AccessLevel,
  Authentication,
  AuthenticationLive,
  accessGuardLayer,
  anyPermission,
  anyRole,
  CurrentPrincipal,
  RequireSuperuser,
  RequireVerified,
  requirePermissions,
  requireRoles
} from "./interfaces/http/AccessLevels.js"
export { makeApi, type PortcullisApi } from "./interfaces/http/Api.js"
export { type HttpOptions, httpLayer } from "./interfaces/http/server.js"
