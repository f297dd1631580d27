import { describe, expect, layer } from "@effect/vitest"
import { Effect } from "effect"
import { AuditLog } from "../../application/ports/AuditLog.js"
import { UserId } from "../../domain/User.js"
import { call, expectProblem, me, refresh, signIn, signUp } from "../support/flows.js"
import { MINUTE, seedSessions } from "../support/seedSessions.js"
import * as TestApp from "../support/TestApp.js"

/**
 * Data over time for sessions (docs/operating.md): GET /sessions a page at a time with its Link
 * header, the cap of live sessions a user holds, and the bulk endings (that they do not hold the
 * process while they run is ending-sessions-answering.test.ts's, in `npm run test:timing`).
 */

interface SessionInfoBody {
  readonly family_id: string
  readonly user_agent: string | null
  readonly last_used_at: string
  readonly current: boolean
}

const familyOf = (accessToken: string): string => {
  const payload = accessToken.split(".")[1] ?? ""
  return (JSON.parse(Buffer.from(payload, "base64url").toString("utf8")) as { family_id: string }).family_id
}

/** The target of a Link header's rel="next", or none. */
const nextLink = (headers: Headers): string | undefined =>
  /^<([^>]+)>; rel="next"$/.exec(headers.get("link") ?? "")?.[1]

/** Every page of the caller's sessions, following the Link header from `firstPath`. */
const everyPage = (token: string, firstPath: string) =>
  Effect.gen(function* () {
    const app = yield* TestApp.TestApp
    const pages: Array<ReadonlyArray<SessionInfoBody>> = []
    let path: string | undefined = `${app.settings.server.authPrefix}${firstPath}`
    while (path !== undefined) {
      const reply = yield* app.request("GET", path, { token })
      expect(reply.status).toBe(200)
      pages.push(reply.body as ReadonlyArray<SessionInfoBody>)
      path = nextLink(reply.headers)
      if (pages.length > 50) throw new Error("the pages never end")
    }
    return pages
  })

for (const backend of TestApp.backendsWithFile()) {
  describe(`GET /sessions a page at a time (${backend.name})`, () => {
    // Ending a thousand sessions in batches is under test, not the store's timeout: on a machine
    // loaded by the whole suite, PostgreSQL once took longer than the default 5 s.
    layer(TestApp.layer(backend, { SERVICE_STORE_TIMEOUT_SECONDS: "30" }), { excludeTestServices: true })((it) => {
      it.effect("pages of 100 by default: the caller's own first, then most recently used first, each once", () =>
        Effect.gen(function* () {
          const caller = yield* signUp("pages")
          const seeded = yield* seedSessions(caller, 230)
          const pages = yield* everyPage(caller.access, "/sessions")
          expect(pages.map((page) => page.length)).toEqual([100, 100, 31])
          const listed = pages.flat()
          expect(listed[0]).toMatchObject({ family_id: familyOf(caller.access), current: true })
          expect(listed.slice(1).map((session) => session.family_id)).toEqual(seeded)
          expect(listed.filter((session) => session.current)).toHaveLength(1)
        })
      )

      it.effect("?limit= sets the page's size, kept in the next page's link; a limit of 1 still reaches them all", () =>
        Effect.gen(function* () {
          const app = yield* TestApp.TestApp
          const caller = yield* signUp("limit")
          const seeded = yield* seedSessions(caller, 5)
          const first = yield* call("GET", "/sessions?limit=2", { token: caller.access })
          expect((first.body as ReadonlyArray<SessionInfoBody>).map((session) => session.family_id)).toEqual([
            familyOf(caller.access),
            seeded[0]
          ])
          expect(nextLink(first.headers)).toMatch(
            new RegExp(`^${app.settings.server.authPrefix}/sessions\\?limit=2&cursor=`)
          )
          const ones = yield* everyPage(caller.access, "/sessions?limit=1")
          expect(ones.map((page) => page.length)).toEqual([1, 1, 1, 1, 1, 1])
          expect(ones.flat().map((session) => session.family_id)).toEqual([familyOf(caller.access), ...seeded])
          // The last page announces none.
          const all = yield* call("GET", "/sessions?limit=500", { token: caller.access })
          expect(all.headers.get("link")).toBeNull()
          expect(all.body).toHaveLength(6)
        })
      )

      it.effect("a session ended between two pages is not shown on the next", () =>
        Effect.gen(function* () {
          const caller = yield* signUp("moving")
          const seeded = yield* seedSessions(caller, 6)
          const first = yield* call("GET", "/sessions?limit=3", { token: caller.access })
          const next = nextLink(first.headers)
          expect(next).toBeDefined()
          expect((yield* call("DELETE", `/sessions/${seeded[3]}`, { token: caller.access })).status).toBe(204)
          const app = yield* TestApp.TestApp
          const second = yield* app.request("GET", next ?? "", { token: caller.access })
          expect((second.body as ReadonlyArray<SessionInfoBody>).map((session) => session.family_id)).toEqual([
            seeded[2],
            seeded[4],
            seeded[5]
          ])
        })
      )

      it.effect("a limit out of range or a cursor not from a Link header is a 422 naming the parameter", () =>
        Effect.gen(function* () {
          const caller = yield* signUp("bad-page")
          for (const query of [
            "limit=0",
            "limit=501",
            "limit=ten",
            "limit=1.5",
            "cursor=secret-cursor-value",
            "cursor=1",
            "cursor=12345678901234567.x",
            "cursor=5.a%20b"
          ]) {
            const reply = yield* call("GET", `/sessions?${query}`, { token: caller.access })
            const problem = expectProblem(reply, 422, "ValidationError")
            expect(JSON.stringify(problem.errors)).toContain(query.split("=")[0])
            expect(reply.text).not.toContain("secret-cursor-value")
          }
          // A cursor is only a place in the caller's own list: another user's ids show nothing of theirs.
          const other = yield* signUp("other")
          const others = yield* seedSessions(other, 2, "theirs")
          const reply = yield* call("GET", `/sessions?cursor=${Date.now() + MINUTE}.${others[0]}`, {
            token: caller.access
          })
          expect(reply.status).toBe(200)
          // Past the first page the caller's own is not shown again, and no one else's ever is.
          expect(reply.body).toEqual([])
        })
      )

      it.effect("revoke-others ends over a thousand sessions in batches and counts only the live ones", () =>
        Effect.gen(function* () {
          const caller = yield* signUp("many")
          yield* seedSessions(caller, 1_200)
          const reply = yield* call("POST", "/sessions/revoke-others", { token: caller.access })
          expect(reply.status).toBe(200)
          expect(reply.body).toMatchObject({ revoked: 1_200 })
          expect(yield* call("GET", "/sessions", { token: caller.access })).toMatchObject({
            status: 200,
            body: [{ family_id: familyOf(caller.access), current: true }]
          })
        })
      )
    })
  })

  describe(`MAX_SESSIONS_PER_USER (${backend.name})`, () => {
    layer(TestApp.layer(backend, { SERVICE_MAX_SESSIONS_PER_USER: "3" }), { excludeTestServices: true })((it) => {
      it.effect("a sign-in past the cap ends the least recently used session, audited session.evicted", () =>
        Effect.gen(function* () {
          const first = yield* signUp("capped")
          const second = yield* signIn(first.email)
          const third = yield* signIn(first.email)
          // The first session is used again: the second is now the least recently used.
          yield* Effect.sleep("5 millis")
          const rotated = yield* refresh(first.refresh)
          expect(rotated.status).toBe(200)
          const firstNow = (rotated.body as { access_token: string }).access_token
          yield* Effect.sleep("5 millis")
          const fourth = yield* signIn(first.email)

          expectProblem(yield* me(second.access), 401, "TokenBlacklistedError")
          expectProblem(yield* refresh(second.refresh), 401, "TokenBlacklistedError")
          for (const alive of [firstNow, third.access, fourth.access]) expect((yield* me(alive)).status).toBe(200)
          const listed = (yield* call("GET", "/sessions", { token: fourth.access }))
            .body as ReadonlyArray<SessionInfoBody>
          expect(listed.map((session) => session.family_id).sort()).toEqual(
            [familyOf(firstNow), familyOf(third.access), familyOf(fourth.access)].sort()
          )

          const entries = yield* (yield* AuditLog).list({ user_id: UserId.make(first.userId), limit: 50 })
          const evicted = entries.filter((entry) => entry.type === "session.evicted")
          expect(evicted.map((entry) => entry.details)).toEqual([{ family_id: familyOf(second.access) }])
        })
      )
    })
  })
}
