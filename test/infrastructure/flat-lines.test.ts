import * as Headers from "@effect/platform/Headers"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Logger, LogLevel, Redacted } from "effect"
import * as FlatLines from "../../infrastructure/logging/flatLines.js"

/** The lines `effect` logs through `logger`. */
const linesOf = <A, E>(logger: Logger.Logger<unknown, string>, effect: Effect.Effect<A, E>) =>
  Effect.gen(function* () {
    const lines: Array<string> = []
    yield* Effect.exit(
      effect.pipe(
        Effect.provide(
          Logger.replace(
            Logger.defaultLogger,
            Logger.map(logger, (line) => lines.push(line))
          )
        ),
        Logger.withMinimumLogLevel(LogLevel.Debug)
      )
    )
    return lines
  })

describe("flat log lines", () => {
  it.effect("json: one flat object, time, level and msg first, then annotations and an object's fields", () =>
    Effect.gen(function* () {
      const [line] = yield* linesOf(
        FlatLines.json,
        Effect.logInfo("mail (MAILER=console, not sent)", { to: "a@example.com", msg: "not over msg" }).pipe(
          Effect.annotateLogs({ request_id: "r-1", status: 200 })
        )
      )
      const record = JSON.parse(line ?? "") as Record<string, unknown>
      expect(Object.keys(record).slice(0, 3)).toEqual(["time", "level", "msg"])
      expect(record).toEqual({
        time: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
        level: "info",
        msg: "mail (MAILER=console, not sent)",
        to: "a@example.com",
        request_id: "r-1",
        status: 200
      })
      expect(line).not.toContain("fiberId")
      expect(line).not.toContain("annotations")
    })
  )

  it.effect("json: a cause is rendered, other values are detail, secrets stay redacted", () =>
    Effect.gen(function* () {
      const [line] = yield* linesOf(
        FlatLines.json,
        Effect.fail(new Error("the disk is full")).pipe(
          Effect.catchAllCause((cause) => Effect.logError("database operation failed", cause, 42)),
          Effect.annotateLogs("secret", Redacted.make("hunter2"))
        )
      )
      const record = JSON.parse(line ?? "") as Record<string, unknown>
      expect(record).toMatchObject({ level: "error", msg: "database operation failed", detail: 42 })
      expect(String(record.cause)).toContain("the disk is full")
      expect(line).not.toContain("hunter2")
      expect(record.secret).toBe("<redacted>")
    })
  )

  it.effect("json: a field holding objects keeps the secrets within them redacted and its cycles cut", () =>
    Effect.gen(function* () {
      const cyclic: Record<string, unknown> = { name: "loop" }
      cyclic.self = cyclic
      const [line] = yield* linesOf(
        FlatLines.json,
        Effect.logWarning("odd request", {
          request: { headers: Headers.fromInput({ authorization: "Bearer s3cret-token", accept: "*/*" }) },
          nested: { key: Redacted.make("hunter2") },
          cyclic
        })
      )
      expect(line).not.toContain("s3cret-token")
      expect(line).not.toContain("hunter2")
      const record = JSON.parse(line ?? "") as Record<string, never>
      expect(record).toMatchObject({
        request: { headers: { authorization: "<redacted>", accept: "*/*" } },
        nested: { key: "<redacted>" },
        cyclic: { name: "loop" }
      })
    })
  )

  it.effect("logfmt: each key once, values quoted where they must be", () =>
    Effect.gen(function* () {
      const [line] = yield* linesOf(
        FlatLines.logfmt,
        Effect.logWarning("rate limit skipped").pipe(Effect.annotateLogs({ path: "/api/v1/auth/login", ua: 'a "b" c' }))
      )
      expect(line).toMatch(
        /^time=\S+ level=warn msg="rate limit skipped" path=\/api\/v1\/auth\/login ua="a \\"b\\" c"$/
      )
      expect(line?.match(/msg=/g)).toHaveLength(1)
    })
  )
})
