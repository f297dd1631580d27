import * as Headers from "@effect/platform/Headers"
import { describe, expect, it, vi } from "@effect/vitest"
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

  describe("flatLine: a line written without a log call", () => {
    const fields = {
      method: "GET",
      route: "unmatched",
      path: '/a path/with "quotes" and = signs',
      status: 404,
      duration_ms: 0,
      user_agent: "odd\u0001agent\nnew line ünïcode \\ backslash",
      empty: ""
    }
    const afterTime = (line: string | undefined) => line?.replace(/^\{"time":"[^"]+",/, "{").replace(/^time=\S+ /, "")

    for (const [format, logger] of [
      ["json", FlatLines.json],
      ["logfmt", FlatLines.logfmt]
    ] as const) {
      it.effect(`${format}: the logger's own line for the same message, fields and annotation`, () =>
        Effect.gen(function* () {
          const [logged] = yield* linesOf(
            logger,
            Effect.logDebug("http request", fields).pipe(Effect.annotateLogs("request_id", "r-7"))
          )
          const direct = FlatLines.flatLine(format)(LogLevel.Debug, "http request", { ...fields, request_id: "r-7" })
          expect(afterTime(direct)).toBe(afterTime(logged))
          expect(direct).not.toBe(afterTime(direct))
        })
      )
    }

    it("stamps each line with the millisecond it is written in", () => {
      vi.useFakeTimers()
      try {
        vi.setSystemTime(Date.UTC(2026, 10, 27, 8, 0, 0, 1))
        const first = JSON.parse(FlatLines.flatLine("json")(LogLevel.Info, "a", {})) as { time: string }
        const again = JSON.parse(FlatLines.flatLine("json")(LogLevel.Info, "b", {})) as { time: string }
        vi.setSystemTime(Date.UTC(2026, 10, 27, 8, 0, 0, 2))
        const later = JSON.parse(FlatLines.flatLine("json")(LogLevel.Info, "c", {})) as { time: string }
        expect([first.time, again.time, later.time]).toEqual([
          "2026-11-27T08:00:00.001Z",
          "2026-11-27T08:00:00.001Z",
          "2026-11-27T08:00:00.002Z"
        ])
      } finally {
        vi.useRealTimers()
      }
    })
  })
})
