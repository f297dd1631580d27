import { randomUUID } from "node:crypto"
import { describe, expect, layer } from "@effect/vitest"
import { DateTime, Effect, Option } from "effect"
import { RefreshTokenRepo } from "../../application/ports/RefreshTokenRepo.js"
import { FamilyId, StoredRefreshToken, TokenFamily } from "../../domain/Session.js"
import { UserId } from "../../domain/User.js"
import {
  call,
  expectProblem,
  login,
  me,
  refresh,
  register,
  type Session,
  signUp,
  uniqueEmail
} from "../support/flows.js"
import * as TestApp from "../support/TestApp.js"

interface SessionInfoBody {
  readonly family_id: string
  readonly ip_address: string | null
  readonly user_agent: string | null
  readonly created_at: string
  readonly last_used_at: string
  readonly expires_at: string
  readonly current: boolean
}

/** The family an access token belongs to, read from its (unverified) payload. */
const familyOf = (accessToken: string): string => {
  const payload = accessToken.split(".")[1] ?? ""
  return (JSON.parse(Buffer.from(payload, "base64url").toString("utf8")) as { family_id: string }).family_id
}

/** Logs in from a device that names itself in User-Agent. */
const signInFrom = (email: string, userAgent: string) =>
  Effect.gen(function* () {
    const reply = yield* login(email, undefined, { "user-agent": userAgent })
    expect(reply.status).toBe(200)
    const body = reply.body as { access_token: string; refresh_token: string; user: { id: string | number } }
    const { id } = body.user
    return { email, access: body.access_token, refresh: body.refresh_token, userId: String(id), id } satisfies Session
  })

/** A new user signed in from each of the named devices, in order. */
const userWithDevices = (...devices: ReadonlyArray<string>) =>
  Effect.gen(function* () {
    const email = uniqueEmail("devices")
    expect((yield* register(email)).status).toBe(202)
    return yield* Effect.forEach(devices, (device) => signInFrom(email, device))
  })

const listSessions = (token: string) =>
  Effect.gen(function* () {
    const reply = yield* call("GET", "/sessions", { token })
    expect(reply.status).toBe(200)
    return reply.body as ReadonlyArray<SessionInfoBody>
  })

const deleteSession = (token: string, familyId: string) =>
  call("DELETE", `/sessions/${encodeURIComponent(familyId)}`, { token })

const revokeOthers = (token: string) => call("POST", "/sessions/revoke-others", { token })

/** The access token is refused, and so is the refresh token: the session is over. */
const expectEnded = (session: Session) =>
  Effect.gen(function* () {
    expectProblem(yield* me(session.access), 401, "TokenBlacklistedError")
    expectProblem(yield* refresh(session.refresh), 401, "TokenBlacklistedError")
  })

/** The access token works, and the refresh token rotates. */
const expectAlive = (session: Session) =>
  Effect.gen(function* () {
    expect((yield* me(session.access)).status).toBe(200)
    expect((yield* refresh(session.refresh)).status).toBe(200)
  })

const isoUtc = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/

for (const backend of TestApp.backendsWithFile()) {
  describe(`sessions routes (${backend.name})`, () => {
    layer(TestApp.layer(backend), { excludeTestServices: true })((it) => {
      it.effect("GET /sessions lists each login as a session with its IP and User-Agent, the caller's current", () =>
        Effect.gen(function* () {
          const [phone, laptop, tablet] = yield* userWithDevices("Phone/1.0", "Laptop/2.0", "Tablet/3.0")
          if (!phone || !laptop || !tablet) throw new Error("three sessions expected")
          const listed = yield* listSessions(laptop.access)
          // The caller's own first, then the others most recently used first.
          expect(listed.map((session) => session.user_agent)).toEqual(["Laptop/2.0", "Tablet/3.0", "Phone/1.0"])
          expect(listed.map((session) => session.family_id)).toEqual(
            [laptop, tablet, phone].map((s) => familyOf(s.access))
          )
          expect(listed.map((session) => session.current)).toEqual([true, false, false])
          for (const session of listed) {
            expect(session).toEqual({
              family_id: expect.any(String),
              ip_address: expect.stringMatching(/^(::ffff:)?127\.0\.0\.1$|^::1$/),
              user_agent: expect.any(String),
              created_at: expect.stringMatching(isoUtc),
              last_used_at: session.created_at,
              expires_at: expect.stringMatching(isoUtc),
              current: expect.any(Boolean)
            })
            const lifetime = Date.parse(session.expires_at) - Date.parse(session.created_at)
            expect(lifetime).toBe(30 * 24 * 60 * 60 * 1000)
          }
        })
      )

      it.effect("a refresh moves its session first, and its new access token is the current one", () =>
        Effect.gen(function* () {
          const [phone, laptop] = yield* userWithDevices("Phone/1.0", "Laptop/2.0")
          if (!phone || !laptop) throw new Error("two sessions expected")
          expect((yield* listSessions(laptop.access)).map((s) => s.user_agent)).toEqual(["Laptop/2.0", "Phone/1.0"])

          const rotated = yield* call("POST", "/refresh", {
            json: { refresh_token: phone.refresh },
            headers: { "user-agent": "Phone/1.0" }
          })
          expect(rotated.status).toBe(200)
          const pair = rotated.body as { access_token: string }

          const listed = yield* listSessions(pair.access_token)
          expect(listed.map((s) => [s.user_agent, s.current])).toEqual([
            ["Phone/1.0", true],
            ["Laptop/2.0", false]
          ])
          const [refreshed] = listed
          expect(Date.parse(refreshed?.last_used_at ?? "")).toBeGreaterThan(Date.parse(refreshed?.created_at ?? ""))
          // The same session as before the refresh: one sign-in, one family.
          expect(refreshed?.family_id).toBe(familyOf(phone.access))
        })
      )

      it.effect("a refresh records the User-Agent it came from as the session's latest", () =>
        Effect.gen(function* () {
          const [caller, browser] = yield* userWithDevices("Caller", "Browser/1.0")
          if (!caller || !browser) throw new Error("two sessions expected")
          const reply = yield* call("POST", "/refresh", {
            json: { refresh_token: browser.refresh },
            headers: { "user-agent": "Browser/2.0" }
          })
          expect(reply.status).toBe(200)
          const listed = yield* listSessions(browser.access)
          expect(listed.map((s) => s.user_agent)).toEqual(["Browser/2.0", "Caller"])
          expect(listed[0]?.family_id).toBe(familyOf(browser.access))
          expect((yield* listSessions(caller.access)).map((s) => s.user_agent)).toEqual(["Caller", "Browser/2.0"])
        })
      )

      it.effect("logged-out, deleted and reuse-ended sessions disappear from the list", () =>
        Effect.gen(function* () {
          const [caller, loggedOut, deleted, reused] = yield* userWithDevices(
            "Caller",
            "LoggedOut",
            "Deleted",
            "Reused"
          )
          if (!caller || !loggedOut || !deleted || !reused) throw new Error("four sessions expected")
          expect(yield* listSessions(caller.access)).toHaveLength(4)

          expect((yield* call("POST", "/logout", { token: loggedOut.access })).status).toBe(204)
          expect((yield* deleteSession(caller.access, familyOf(deleted.access))).status).toBe(204)
          expect((yield* refresh(reused.refresh)).status).toBe(200)
          expectProblem(yield* refresh(reused.refresh), 401, "TokenBlacklistedError")

          const listed = yield* listSessions(caller.access)
          expect(listed.map((s) => [s.user_agent, s.current])).toEqual([["Caller", true]])
        })
      )

      it.effect("a user sees only their own sessions", () =>
        Effect.gen(function* () {
          const [alice] = yield* userWithDevices("Alice")
          const [bob] = yield* userWithDevices("Bob")
          if (!alice || !bob) throw new Error("two users expected")
          expect((yield* listSessions(alice.access)).map((s) => s.user_agent)).toEqual(["Alice"])
          expect((yield* listSessions(bob.access)).map((s) => s.user_agent)).toEqual(["Bob"])
        })
      )

      it.effect("deleting a session kills that device's refresh and access tokens, not the caller's", () =>
        Effect.gen(function* () {
          const [caller, lost, bystander] = yield* userWithDevices("Caller", "Lost", "Bystander")
          if (!caller || !lost || !bystander) throw new Error("three sessions expected")
          // The lost device has refreshed once: both of its access tokens must die.
          const rotated = (yield* refresh(lost.refresh)).body as { access_token: string; refresh_token: string }
          const lostNow: Session = { ...lost, access: rotated.access_token, refresh: rotated.refresh_token }

          const reply = yield* deleteSession(caller.access, familyOf(lost.access))
          expect(reply.status).toBe(204)
          expect(reply.text).toBe("")

          yield* expectEnded(lostNow)
          expectProblem(yield* me(lost.access), 401, "TokenBlacklistedError")
          yield* expectAlive(caller)
          yield* expectAlive(bystander)
        })
      )

      it.effect("deleting another user's session is 404, the same as an unknown id, and that session lives on", () =>
        Effect.gen(function* () {
          const [alice] = yield* userWithDevices("Alice")
          const [mallory] = yield* userWithDevices("Mallory")
          if (!alice || !mallory) throw new Error("two users expected")

          const foreign = yield* deleteSession(mallory.access, familyOf(alice.access))
          const unknown = yield* deleteSession(mallory.access, "no-such-session")
          expectProblem(foreign, 404, "NotFoundError")
          expectProblem(unknown, 404, "NotFoundError")
          expect(foreign.body).toEqual(unknown.body)

          expect((yield* listSessions(alice.access)).map((s) => s.user_agent)).toEqual(["Alice"])
          yield* expectAlive(alice)
          yield* expectAlive(mallory)
        })
      )

      it.effect("deleting a session already ended is 404", () =>
        Effect.gen(function* () {
          const [caller, other] = yield* userWithDevices("Caller", "Other")
          if (!caller || !other) throw new Error("two sessions expected")
          expect((yield* deleteSession(caller.access, familyOf(other.access))).status).toBe(204)
          expectProblem(yield* deleteSession(caller.access, familyOf(other.access)), 404, "NotFoundError")
        })
      )

      it.effect("deleting your own current session ends it, as logout does", () =>
        Effect.gen(function* () {
          const [caller, other] = yield* userWithDevices("Caller", "Other")
          if (!caller || !other) throw new Error("two sessions expected")
          expect((yield* deleteSession(caller.access, familyOf(caller.access))).status).toBe(204)
          yield* expectEnded(caller)
          expectProblem(yield* deleteSession(caller.access, familyOf(caller.access)), 401, "TokenBlacklistedError")
          yield* expectAlive(other)
        })
      )

      it.effect("revoke-others ends every other session, counts them, and keeps the caller's", () =>
        Effect.gen(function* () {
          const [caller, second, third, loggedOut] = yield* userWithDevices("Caller", "Second", "Third", "LoggedOut")
          const [stranger] = yield* userWithDevices("Stranger")
          if (!caller || !second || !third || !loggedOut || !stranger) throw new Error("sessions expected")
          expect((yield* call("POST", "/logout", { token: loggedOut.access })).status).toBe(204)

          const reply = yield* revokeOthers(caller.access)
          expect(reply.status).toBe(200)
          // Sessions, not token rows, and not the one already over.
          expect(reply.body).toEqual({ detail: expect.any(String), revoked: 2 })

          yield* expectEnded(second)
          yield* expectEnded(third)
          expect((yield* listSessions(caller.access)).map((s) => [s.user_agent, s.current])).toEqual([["Caller", true]])
          yield* expectAlive(caller)
          yield* expectAlive(stranger)

          expect((yield* revokeOthers(caller.access)).body).toEqual({ detail: expect.any(String), revoked: 0 })
        })
      )

      it.effect("revoke-others counts a session once however many times it was refreshed", () =>
        Effect.gen(function* () {
          const [caller, busy] = yield* userWithDevices("Caller", "Busy")
          if (!caller || !busy) throw new Error("two sessions expected")
          let current = busy.refresh
          for (let i = 0; i < 3; i++) {
            const rotated = yield* refresh(current)
            expect(rotated.status).toBe(200)
            current = (rotated.body as { refresh_token: string }).refresh_token
          }
          expect((yield* revokeOthers(caller.access)).body).toMatchObject({ revoked: 1 })
          expectProblem(yield* refresh(current), 401, "TokenBlacklistedError")
        })
      )

      it.effect("an expired session is not listed, cannot be deleted, and is not counted by revoke-others", () =>
        Effect.gen(function* () {
          const [caller, other] = yield* userWithDevices("Caller", "Other")
          if (!caller || !other) throw new Error("two sessions expected")
          // A device that signed in long ago and never came back: its refresh token has expired.
          const repo = yield* RefreshTokenRepo
          const longAgo = DateTime.unsafeMake(Date.now() - 40 * 24 * 60 * 60 * 1000)
          const expiredAt = DateTime.unsafeMake(Date.now() - 10 * 24 * 60 * 60 * 1000)
          const stale = FamilyId.make(`stale-${randomUUID()}`)
          yield* repo.startFamily(
            new TokenFamily({
              family_id: stale,
              user_id: UserId.make(caller.userId),
              ip_address: "192.0.2.1",
              user_agent: "Stale",
              created_at: longAgo,
              last_used_at: longAgo,
              expires_at: expiredAt,
              revoked_at: Option.none()
            }),
            new StoredRefreshToken({
              digest: `digest-${stale}`,
              family_id: stale,
              issued_at: longAgo,
              expires_at: expiredAt,
              rotated_at: Option.none(),
              sealed_successor: Option.none()
            })
          )

          expect((yield* listSessions(caller.access)).map((s) => s.user_agent)).toEqual(["Caller", "Other"])
          expectProblem(yield* deleteSession(caller.access, stale), 404, "NotFoundError")
          expect((yield* revokeOthers(caller.access)).body).toMatchObject({ revoked: 1 })
          yield* expectEnded(other)
          yield* expectAlive(caller)
        })
      )

      it.effect("every sessions route is 401 without a token, or with a refresh token", () =>
        Effect.gen(function* () {
          const session = yield* signUp()
          const family = familyOf(session.access)
          const routes = [
            ["GET", "/sessions"],
            ["DELETE", `/sessions/${family}`],
            ["POST", "/sessions/revoke-others"]
          ] as const
          for (const [method, path] of routes) {
            const anonymous = yield* call(method, path)
            expectProblem(anonymous, 401, "TokenError")
            expect(anonymous.headers.get("www-authenticate")).toBe('Bearer error="invalid_token"')
            expectProblem(yield* call(method, path, { token: session.refresh }), 401, "TokenError")
          }
          // Nothing was ended by the refused calls.
          yield* expectAlive(session)
        })
      )

      it.effect("a wrong method on a session is 405 naming DELETE", () =>
        Effect.gen(function* () {
          const session = yield* signUp()
          const reply = yield* call("GET", `/sessions/${familyOf(session.access)}`, { token: session.access })
          expectProblem(reply, 405, "MethodNotAllowedError")
          expect(reply.headers.get("allow")).toBe("DELETE")
        })
      )
    })
  })
}
