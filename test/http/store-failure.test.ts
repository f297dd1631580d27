import { mkdtempSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { describe, expect, layer } from "@effect/vitest"
import Database from "better-sqlite3"
import { Effect } from "effect"
import { expectProblem, login, me, signUp } from "../support/flows.js"
import * as TestApp from "../support/TestApp.js"

const file = join(mkdtempSync(join(tmpdir(), "portcullis-failure-")), "db.sqlite")

/** Another connection to the same file, as an operator's mistake or a broken disk would be. */
const behindItsBack = (statement: string) =>
  Effect.sync(() => {
    const db = new Database(file)
    try {
      db.exec(statement)
    } finally {
      db.close()
    }
  })

describe("a database that stops answering", () => {
  layer(TestApp.layer(`sqlite:${file}`), { excludeTestServices: true })((it) => {
    it.effect("answers 503 problem+json, never a 500, and recovers by itself when the store is back", () =>
      Effect.gen(function* () {
        const session = yield* signUp()
        yield* behindItsBack("ALTER TABLE users RENAME TO users_away")
        const down = yield* me(session.access)
        const problem = expectProblem(down, 503, "ServiceUnavailableError")
        expect(down.headers.get("retry-after")).toBe("5")
        expect(JSON.stringify(problem)).not.toContain("users")
        expectProblem(yield* login(session.email), 503, "ServiceUnavailableError")
        const app = yield* TestApp.TestApp
        const notReady = expectProblem(yield* app.request("GET", "/readyz"), 503, "ServiceUnavailableError")
        expect(notReady.detail).toContain("database")
        expect((yield* app.request("GET", "/healthz")).status).toBe(200)
        yield* behindItsBack("ALTER TABLE users_away RENAME TO users")
        expect((yield* me(session.access)).status).toBe(200)
        expect((yield* login(session.email)).status).toBe(200)
        // The probe's statement was first prepared while the table was away; it is prepared again
        // within PREPARED_STATEMENT_TTL, not after the client's default ten minutes.
        const started = Date.now()
        let ready = yield* app.request("GET", "/readyz")
        while (ready.status !== 200 && Date.now() - started < 8_000) {
          yield* Effect.sleep("250 millis")
          ready = yield* app.request("GET", "/readyz")
        }
        expect(ready.body).toEqual({ status: "ready" })
      })
    )
  })
})
