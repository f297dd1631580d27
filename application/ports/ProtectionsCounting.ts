import { Context, Effect } from "effect"

/**
 * Where the rate limits and lockout count now. With REDIS_URL they count in Redis, shared by
 * every process, except while Redis is unusable: then each process counts on its own (`local`),
 * which readiness reports. Without REDIS_URL there is nothing to fall back from, hence the default.
 */
export class ProtectionsCounting extends Context.Reference<ProtectionsCounting>()("app/ProtectionsCounting", {
  defaultValue: (): { readonly local: Effect.Effect<boolean> } => ({ local: Effect.succeed(false) })
}) {}
