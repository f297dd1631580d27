import { Effect, FiberRef } from "effect"

/**
 * How a use case names its span: `span("Sessions.refresh")(function* …)`. Where the tracer is
 * off (no exporter configured), `Effect.fn` still makes every span it names: a stack capture, a
 * span that nobody reads and a copy of the request's context, 20–30 µs a call measured alone.
 * So a use case built under a tracer that is off gets `Effect.fnUntraced` instead, and one built
 * under a tracer that is on records its spans as before.
 */
export const spans: Effect.Effect<(name: string) => Effect.fn.Untraced> = Effect.map(
  FiberRef.get(FiberRef.currentTracerEnabled),
  (enabled) => (enabled ? (name) => Effect.fn(name) : () => Effect.fnUntraced)
)
