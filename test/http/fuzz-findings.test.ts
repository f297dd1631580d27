import { describe, expect, layer } from "@effect/vitest"
import { Effect } from "effect"
import { call, login, register, signIn, uniqueEmail } from "../support/flows.js"
import { type Answer, client } from "../support/rawHttp.js"
import * as TestApp from "../support/TestApp.js"

/**
 * What the fuzzer (fuzz.test.ts) found beyond the holes it was written for, each pinned down by
 * one deterministic request, so that a fix can be checked without waiting for a seed to find it.
 */

/** A request sent exactly as written: fetch would resolve dot segments and re-encode the target. */
const send = (method: string, target: string, headers: ReadonlyArray<readonly [string, string]> = [], body?: string) =>
  Effect.flatMap(TestApp.TestApp, (app) =>
    Effect.acquireUseRelease(
      Effect.sync(() => client(app.url, 1)),
      (http) =>
        Effect.promise(() =>
          http.send(
            {
              method,
              target,
              headers: [...headers, ["content-length", String(Buffer.byteLength(body ?? ""))]],
              body: body === undefined ? undefined : Buffer.from(body)
            },
            5_000
          )
        ),
      (http) => Effect.sync(http.close)
    )
  )

/** The answer, which must be a problem with a 4xx status. */
const expectClientProblem = (outcome: { readonly answer: Answer } | { readonly error: string }) => {
  expect(outcome).not.toHaveProperty("error")
  const answer = (outcome as { readonly answer: Answer }).answer
  expect(answer.status).toBeGreaterThanOrEqual(400)
  expect(answer.status).toBeLessThan(500)
  expect(answer.headers["content-type"]).toBe("application/problem+json")
  expect(JSON.parse(answer.body.toString("utf8"))).toMatchObject({ status: answer.status })
  return answer
}

const prefix = "/api/v1/auth"

// The HTTP layer answers these before any store is involved: one backend is enough.
describe("requests the fuzzer found mishandled", () => {
  layer(TestApp.layer("memory:"), { excludeTestServices: true })((it) => {
    it.effect(
      "a target opening with // and no valid host after it is a 404 problem (422 for a control character), not a bare 500",
      () =>
        Effect.gen(function* () {
          for (const [target, status] of [
            ["//%7F", 422],
            ["//a%20b/healthz", 404],
            ["//[/x", 404]
          ] as const) {
            const answer = expectClientProblem(yield* send("GET", target))
            expect(answer.status, target).toBe(status)
          }
        })
    )

    it.effect("a 405 never lists the request's own method in Allow", () =>
      Effect.gen(function* () {
        const requests: ReadonlyArray<readonly [string, string]> = [
          ["POST", `${prefix}/x/../login`],
          ["GET", `${prefix}/./me`],
          ["GET", `${prefix}/admin/roles/a%zz/permissions`],
          ["DELETE", `${prefix}/sessions/${"f".repeat(101)}`],
          ["GET", `//x${prefix}/me`],
          ["DELETE", `${prefix}/sessions/;jsessionid=x`]
        ]
        for (const [method, target] of requests) {
          const answer = expectClientProblem(yield* send(method, target))
          if (answer.status === 405)
            expect(answer.headers.allow?.split(", "), `${method} ${target}`).not.toContain(method)
        }
      })
    )

    it.effect("an empty body labelled multipart is answered with a problem, never left hanging or a 500", () =>
      Effect.gen(function* () {
        for (const contentType of ["multipart/form-data; boundary=x", "multipart/form-data"]) {
          expectClientProblem(yield* send("POST", `${prefix}/login`, [["content-type", contentType]]))
        }
      })
    )

    it.effect("a JSON body labelled with a …+json media type is read as JSON", () =>
      Effect.gen(function* () {
        const body = JSON.stringify({ email: uniqueEmail(), password: "not the password" })
        for (const contentType of ["application/vnd.api+json", "application/problem+json"]) {
          const answer = expectClientProblem(
            yield* send("POST", `${prefix}/login`, [["content-type", contentType]], body)
          )
          expect(answer.status, contentType).toBe(401)
        }
      })
    )
  })
})

for (const backend of TestApp.backends) {
  describe(`a sign-in racing the account's deletion (${backend.name})`, () => {
    layer(TestApp.layer(backend), { excludeTestServices: true })((it) => {
      it.effect("answers 200 or 401, never a 5xx (the session's insert meets a deleted user)", () =>
        Effect.gen(function* () {
          for (let round = 0; round < 5; round++) {
            const email = uniqueEmail("race")
            expect((yield* register(email)).status).toBe(202)
            const session = yield* signIn(email)
            const [deletion, ...logins] = yield* Effect.all(
              [call("DELETE", "/me", { token: session.access }), login(email), login(email), login(email)],
              { concurrency: "unbounded" }
            )
            expect(deletion?.status).toBe(204)
            for (const reply of logins) expect([200, 401], reply.text).toContain(reply.status)
          }
        })
      )
    })
  })
}
