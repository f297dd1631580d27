import { Context, type Effect } from "effect"
import type { AuthEvent } from "../../domain/Events.js"

/**
 * Delivers the named events to whoever handles them (the deployment's handlers, the mailer).
 * Emitting never fails and never waits for the handlers: a slow or failing handler cannot
 * fail a request or tell, by its timing, what the request found.
 */
export class Events extends Context.Tag("app/Events")<
  Events,
  { readonly emit: (event: AuthEvent) => Effect.Effect<void> }
>() {}
