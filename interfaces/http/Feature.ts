import type { HttpApiGroup } from "@effect/platform"
import type { Layer } from "effect"
import type { Deployment } from "../../config/Deployment.js"
import type { Settings } from "../../config/Settings.js"
import type { RateLimitBucket } from "../../config/sections/limits.js"

/** The API's identifier: every feature's group and handlers belong to one API of this name. */
export const API_ID = "portcullis"
export type ApiId = typeof API_ID

/** A route a rate-limit bucket counts: all limited routes are POST, their paths under the auth prefix. */
export interface LimitedRoute {
  readonly bucket: RateLimitBucket
  readonly path: string
  /** It hashes a password for anyone who asks (sign-in, registration): its queue is bounded (HASHING_QUEUE_LIMIT). */
  readonly hashes?: true
}

/** What shapes a feature's routes: the settings and the deployment's code. */
export interface FeatureContext {
  readonly settings: Settings
  readonly deployment: Deployment
}

/**
 * A feature's HttpApi group, under the auth prefix, and the layer of the group's handlers, which
 * register the group's routes. The handlers' service is not named here: the assembled API's
 * groups vary with the deployment, so it asks for none by type (Api.ts pairs each group with
 * its handlers instead).
 */
export interface FeatureApi<R> {
  readonly group: HttpApiGroup.HttpApiGroup.Any
  readonly handlers: Layer.Layer<never, never, R>
}

/**
 * A feature of the service (auth, profile, verify, sessions, admin, oauth, passkey): everything
 * that serves it over HTTP, in one value, registered in the composition root's table of
 * features. Adding a route group, or a limited route, is a change to its feature alone.
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
