import { Layer } from "effect"
import { AccessControl } from "../application/AccessControl.js"
import { Accounts } from "../application/Accounts.js"
import { AddressChangeUndo } from "../application/AddressChangeUndo.js"
import { Admin } from "../application/Admin.js"
import { Audit, cliContext, RequestContext } from "../application/Audit.js"
import { CurrentPassword } from "../application/CurrentPassword.js"
import { EvenAnswers } from "../application/EvenAnswers.js"
import { Lockout } from "../application/Lockout.js"
import { ClientAdmin } from "../application/oidc/ClientAdmin.js"
import { ResourceAdmin } from "../application/oidc/ResourceAdmin.js"
import { PasswordSignIn } from "../application/PasswordSignIn.js"
import { Pruning } from "../application/Pruning.js"
import { Readiness } from "../application/Readiness.js"
import { Refresh } from "../application/Refresh.js"
import { SecurityNotices } from "../application/SecurityNotices.js"
import { Sessions } from "../application/Sessions.js"
import { Verification } from "../application/Verification.js"
import { WaysIn } from "../application/WaysIn.js"
import { WebhookAdmin } from "../application/WebhookAdmin.js"
import { WebhookDelivery } from "../application/WebhookDelivery.js"
import { Webhooks } from "../application/Webhooks.js"
import type { Deployment } from "../config/Deployment.js"
import type { Settings } from "../config/Settings.js"
import { ports } from "./adapters.js"

/**
 * The use cases every feature shares, over whatever adapters are provided for their ports. A
 * feature's own use cases are given to its handlers in the table of features (features.ts).
 */
export const useCases = Layer.mergeAll(
  Accounts.Default,
  PasswordSignIn.Default,
  AccessControl.Default,
  Readiness.Default,
  Pruning.Default,
  Refresh.Default,
  WebhookDelivery.Default
).pipe(
  Layer.provideMerge(WaysIn.Default),
  Layer.provideMerge(CurrentPassword.Default),
  Layer.provideMerge(Layer.mergeAll(Sessions.Default, Verification.Default, Lockout.Default)),
  Layer.provideMerge(SecurityNotices.Default),
  Layer.provideMerge(Layer.merge(Audit.Default, EvenAnswers.Default)),
  Layer.provideMerge(Webhooks.Default)
)

/**
 * The use cases over the adapters the settings choose, the ports exposed beside them. `overrides`
 * replace some of those adapters (a failing store, a counting hasher in tests).
 */
export const application = <A = never, E = never, R = never>(
  settings: Settings,
  deployment: Deployment = {},
  overrides?: Layer.Layer<A, E, R>
) => {
  const adapters = ports(settings, deployment)
  // Overrides are built over the adapters (a double may wrap a store's own adapter, on its client) and win.
  return useCases.pipe(Layer.provideMerge(overrides === undefined ? adapters : Layer.provideMerge(overrides, adapters)))
}

/**
 * What the operator commands run (the CLI's Operations): the application of the settings and the
 * operator's own use cases over it, as the CLI, the audit log's actor.
 */
export const operations = (settings: Settings) =>
  Layer.mergeAll(
    Admin.Default,
    WebhookAdmin.Default,
    ClientAdmin.Default,
    ResourceAdmin.Default,
    AddressChangeUndo.Default,
    Layer.succeed(RequestContext, cliContext)
  ).pipe(Layer.provideMerge(application(settings)))
