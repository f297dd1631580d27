import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { describe, expect, layer } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { UserRepo } from "../../application/ports/UserRepo.js"
import { UserId } from "../../domain/User.js"
import { call, expectProblem, signUp } from "../support/flows.js"
import { addPasskey, authenticateComplete, passkeyEnv, passkeySignIn, signInOptions } from "../support/passkeys.js"
import { SoftwareAuthenticator } from "../support/SoftwareAuthenticator.js"
import * as TestApp from "../support/TestApp.js"

/**
 * Racing passkey sign-ins through HTTP on every backend, a SQLite file (several connections'
 * worth of writers) and PostgreSQL among them: assertions carrying one counter value, and
 * completions of one challenge, each let at most one sign-in through.
 */

const RACERS = 20

/** A SQLite database in a file of its own folder, removed afterwards. */
const sqliteFile = Layer.unwrapScoped(
  Effect.map(
    Effect.acquireRelease(
      Effect.sync(() => mkdtempSync(join(tmpdir(), "portcullis-passkey-races-"))),
      (folder) => Effect.sync(() => rmSync(folder, { recursive: true, force: true }))
    ),
    (folder) => TestApp.layer(`sqlite:${join(folder, "portcullis.db")}`, passkeyEnv)
  )
)

const services = [
  ...TestApp.backends.map((backend) => ({ name: backend.name, service: TestApp.layer(backend, passkeyEnv) })),
  { name: "sqlite file", service: sqliteFile }
]

/** Sends every sign-in completion at once; exactly one signs in, every other one is the one 401. */
const expectOneWinner = (requests: ReadonlyArray<unknown>) =>
  Effect.gen(function* () {
    const replies = yield* Effect.all(
      requests.map((body) => authenticateComplete(body)),
      { concurrency: "unbounded" }
    )
    const codes = replies.map((reply) => reply.status)
    expect(codes.filter((status) => status === 200)).toHaveLength(1)
    expect(codes.filter((status) => status === 401)).toHaveLength(RACERS - 1)
  })

for (const { name, service } of services) {
  describe(`racing passkey sign-ins (${name})`, () => {
    layer(service, { excludeTestServices: true })((it) => {
      it.effect(`${RACERS} assertions carrying the same counter value: exactly one signs in`, () =>
        Effect.gen(function* () {
          const session = yield* signUp("pk-race-count")
          const authenticator = new SoftwareAuthenticator()
          const { credentialId } = yield* addPasskey(session, authenticator)
          // Each racer has a challenge of its own, so only the sign count stands between them.
          const requests = []
          for (let i = 0; i < RACERS; i++) {
            const options = yield* signInOptions(session.email)
            authenticator.setSignCount(credentialId, 0)
            requests.push({ challenge_key: options.challenge_key, credential: authenticator.authenticate(options) })
          }
          yield* expectOneWinner(requests)
          // The winner stored its count: the same value again is a suspected clone, the next one is not.
          authenticator.setSignCount(credentialId, 0)
          expectProblem(yield* passkeySignIn(authenticator), 401, "AuthenticationError")
          expect((yield* passkeySignIn(authenticator)).status).toBe(200)
        })
      )

      it.effect("deleting a passwordless user's last two passkeys at once leaves one", () =>
        Effect.gen(function* () {
          for (let round = 0; round < 5; round++) {
            const session = yield* signUp("pk-race-delete")
            const ids = [
              (yield* addPasskey(session, new SoftwareAuthenticator())).id,
              (yield* addPasskey(session, new SoftwareAuthenticator())).id
            ]
            yield* Effect.flatMap(UserRepo, (users) => users.clearPassword(UserId.make(session.userId)))
            const replies = yield* Effect.all(
              ids.map((id) => call("DELETE", `/passkeys/${id}`, { token: session.access })),
              { concurrency: "unbounded" }
            )
            const left = (yield* call("GET", "/passkeys", { token: session.access })).body as Array<{ id: string }>
            expect(left.length).toBeGreaterThanOrEqual(1)
            // A 204 means that passkey is gone; a 400 that it is still there.
            replies.forEach((reply, i) => {
              expect([204, 400]).toContain(reply.status)
              expect(left.some((passkey) => passkey.id === ids[i])).toBe(reply.status === 400)
            })
          }
        })
      )

      it.effect(`${RACERS} completions of one challenge: exactly one signs in`, () =>
        Effect.gen(function* () {
          const session = yield* signUp("pk-race-challenge")
          const authenticator = new SoftwareAuthenticator()
          yield* addPasskey(session, authenticator)
          const options = yield* signInOptions(session.email)
          // Every assertion is valid and counts forward: only the challenge stands between them.
          const requests = Array.from({ length: RACERS }, () => ({
            challenge_key: options.challenge_key,
            credential: authenticator.authenticate(options)
          }))
          yield* expectOneWinner(requests)
        })
      )
    })
  })
}
