import { Duration, Effect, Layer, Schedule } from "effect"
import { Audit } from "./Audit.js"

/** How often a serving process deletes what is past retention: often enough that a day's rows never pile up. */
export const SWEEP_EVERY = Duration.hours(1)

/**
 * For as long as the service runs: deletes the audit entries older than AUDIT_RETENTION_DAYS at
 * start, then every SWEEP_EVERY. Every worker sweeps; the deletes are idempotent. A failed sweep
 * is logged and tried again at the next turn. Reads Effect's Clock, so the TestClock drives it.
 */
export const auditRetention = (retentionDays: number) =>
  Layer.scopedDiscard(
    Effect.flatMap(Audit, (audit) =>
      audit.sweep(retentionDays).pipe(
        Effect.tap((deleted) =>
          deleted > 0 ? Effect.logInfo("audit events past retention deleted", { deleted }) : Effect.void
        ),
        Effect.catchTag("StoreUnavailableError", (error) => Effect.logWarning("audit retention sweep failed", error)),
        Effect.repeat(Schedule.spaced(SWEEP_EVERY)),
        Effect.forkScoped
      )
    )
  )
