import { describe, expect, layer } from "@effect/vitest"
import { Effect } from "effect"
import { call, login, me, password, register, signIn, uniqueEmail } from "../support/flows.js"
import { makeOutbox } from "../support/Outbox.js"
import { appWithProviders, person, signInThrough } from "../support/oauthFlows.js"
import * as TestApp from "../support/TestApp.js"

/**
 * Sign-ins racing a change of the user's ways in (docs/behaviour.md, "Ways in", the credential version):
 * a password change, a reset, a takeover. Each round fires sign-ins with the password in force,
 * spread over the few milliseconds the change takes, together with the change. Every one of
 * those sign-ins either fails or had its session ended by the change: at the end of the round
 * not one of their sessions is alive, whichever won. Without the compare-and-set, a sign-in that
 * read the old hash before the change and wrote its session after it kept that session.
 */

const ROUNDS = 6
const SIGN_INS = 6
/** Milliseconds between the sign-ins' starts: together they span the change's hash and commit. */
const SPREAD = 4

const sleep = (millis: number) => Effect.sleep(`${millis} millis`)

/** Sign-ins with `secret`, the i-th started i × SPREAD ms in; the access tokens of those that succeeded. */
const racingSignIns = (email: string, secret: string) =>
  Effect.map(
    Effect.forEach(
      Array.from({ length: SIGN_INS }, (_, index) => index),
      (index) =>
        sleep(index * SPREAD).pipe(
          Effect.zipRight(login(email, secret)),
          Effect.map((reply) => (reply.status === 200 ? [(reply.body as { access_token: string }).access_token] : []))
        ),
      { concurrency: "unbounded" }
    ),
    (tokens) => tokens.flat()
  )

/** The sessions of these access tokens still alive. */
const alive = (tokens: ReadonlyArray<string>) =>
  Effect.map(
    Effect.forEach(tokens, (token) => me(token), { concurrency: 4 }),
    (replies) => replies.filter((reply) => reply.status === 200).length
  )

for (const backend of TestApp.backendsWithFile()) {
  describe(`sign-ins racing a change of the ways in (${backend.name})`, () => {
    const outbox = makeOutbox()
    // Lockout is not the subject: concurrent attempts at one account count toward its lock before
    // any of them is decided, and the change itself is one of them.
    const env = { SERVICE_LOCKOUT_ENABLED: "false" }
    layer(appWithProviders(backend, env, { events: outbox.handlers }), { excludeTestServices: true })((it) => {
      it.effect(
        "a password change: no sign-in with the old password keeps a session",
        () =>
          Effect.gen(function* () {
            let started = 0
            for (let round = 0; round < ROUNDS; round++) {
              const email = uniqueEmail("race-change")
              expect((yield* register(email)).status).toBe(202)
              const owner = yield* signIn(email)
              const [tokens, changed] = yield* Effect.all(
                [
                  racingSignIns(email, password),
                  call("POST", "/change-password", {
                    token: owner.access,
                    json: { current_password: password, new_password: `changed passphrase ${round}` }
                  })
                ],
                { concurrency: "unbounded" }
              )
              expect(changed.status).toBe(200)
              started += tokens.length
              expect(yield* alive(tokens)).toBe(0)
              // The changer's own session goes on.
              expect((yield* me(owner.access)).status).toBe(200)
            }
            // Not a race if no sign-in ever got through: some did, and were ended.
            expect(started).toBeGreaterThan(0)
          }),
        120_000
      )

      it.effect(
        "a reset from the mailed link: no sign-in with the old password keeps a session",
        () =>
          Effect.gen(function* () {
            for (let round = 0; round < ROUNDS; round++) {
              const email = uniqueEmail("race-reset")
              expect((yield* register(email)).status).toBe(202)
              expect((yield* call("POST", "/password-reset/request", { json: { email } })).status).toBe(202)
              const token = yield* outbox.token("send_password_reset_email", email)
              const [tokens, reset] = yield* Effect.all(
                [
                  racingSignIns(email, password),
                  call("POST", "/password-reset/confirm", {
                    json: { token, new_password: `reset passphrase ${round}` }
                  })
                ],
                { concurrency: "unbounded" }
              )
              expect(reset.status).toBe(200)
              expect(yield* alive(tokens)).toBe(0)
            }
          }),
        120_000
      )

      it.effect(
        "a takeover by the address's owner: no sign-in of the squatter keeps a session",
        () =>
          Effect.gen(function* () {
            for (let round = 0; round < ROUNDS; round++) {
              const victim = uniqueEmail("race-takeover")
              expect((yield* register(victim)).status).toBe(202)
              const [tokens, owner] = yield* Effect.all(
                [racingSignIns(victim, password), signInThrough("google", person("owner", { email: victim }))],
                { concurrency: "unbounded" }
              )
              expect(owner.user.is_verified).toBe(true)
              expect(yield* alive(tokens)).toBe(0)
              expect((yield* me(owner.access)).status).toBe(200)
            }
          }),
        120_000
      )
    })
  })
}
