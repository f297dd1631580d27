/**
 * Portcullis in code: compose the service into an application instead of running the CLI.
 *
 * ```ts
 * import { parseSettings, service, type Deployment } from "portcullis"
 * const { settings } = Either.getOrThrow(parseSettings(process.env))
 * service(settings, deployment, NodeHttpServer.layer(createServer, { port: settings.server.port }))
 * ```
 */

export { AccessControl } from "./application/AccessControl.js"
export { Accounts, Registration } from "./application/Accounts.js"
export { AuthPolicy } from "./application/AuthPolicy.js"
export { PasswordSignIn } from "./application/PasswordSignIn.js"
export { Refresh } from "./application/Refresh.js"
export { type Principal, Sessions } from "./application/Sessions.js"
export { ports, resolveSecretKey } from "./composition/adapters.js"
export { application, useCases } from "./composition/application.js"
export { type Deployment, deploymentProblems, features, type RouteGroupName } from "./composition/features.js"
export { authPolicy } from "./composition/policy.js"
export { http, openApiDocument, service } from "./composition/service.js"
export { notYetSupported } from "./composition/startup.js"
export type {
  EventHandlers,
  JsonObject,
  PasswordPolicyOptions,
  RegistrationFields,
  UserFieldSchema,
  UserJson
} from "./config/Deployment.js"
export { parseSettings, type ResolvedSettings, type Settings } from "./config/Settings.js"
export type { ClientInfo } from "./domain/Session.js"
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
export type { PortcullisApi } from "./interfaces/http/Api.js"
export type { Feature } from "./interfaces/http/Feature.js"
