import { randomBytes } from "node:crypto"
import { describe, expect, layer } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { Webhook } from "standardwebhooks"
import { call, login, password, register, signIn, signUp, uniqueEmail } from "../support/flows.js"
import { makeOutbox } from "../support/Outbox.js"
import * as TestApp from "../support/TestApp.js"
import { type ReceivedRequest, webhookReceiver } from "../support/webhookReceiver.js"

/**
 * Audit events leave the process through WEBHOOKS (docs/operating.md, "Webhooks"), on every store: the
 * service writes each subscribed entry to the outbox with the entry itself, its deliverer sends
 * it signed, and the receiver gets ids and public fields only.
 */

const secret = `whsec_${randomBytes(32).toString("base64")}`

/** A receiver in this process, the service's WEBHOOKS pointing at it, for as long as the suite runs. */
const withReceiver = (
  backend: TestApp.Backend,
  received: Array<ReceivedRequest>,
  outbox: ReturnType<typeof makeOutbox>
) =>
  Layer.unwrapScoped(
    Effect.gen(function* () {
      const receiver = yield* webhookReceiver({ received, answer: () => 204 })
      const url = `${receiver.base}/hooks`
      return TestApp.layer(
        backend,
        {
          SERVICE_WEBHOOKS: JSON.stringify([
            {
              url,
              secret,
              events: [
                "sign_in.failed",
                "session.logged_out",
                "after_register",
                "after_login",
                "after_logout",
                "send_verification_email",
                "after_password_reset",
                "send_security_notice",
                "takeover.password_cleared"
              ]
            },
            // A receiver that is down: its failures are the outbox's to retry, never the service's readiness.
            { url: "http://127.0.0.1:9/down", secret, events: "*" }
          ]),
          SERVICE_WEBHOOKS_ALLOW_PRIVATE: "true"
        },
        { deployment: { events: outbox.handlers } }
      )
    })
  )

/** The messages received so far of `type` (about `about`, when given), verified and parsed; waits up to 5 s for `count` of them. */
const messagesOf = (received: ReadonlyArray<ReceivedRequest>, type: string, count: number, about?: string) =>
  Effect.gen(function* () {
    const verify = (message: ReceivedRequest) =>
      new Webhook(secret).verify(message.body, message.headers as Record<string, string>) as {
        readonly type: string
        readonly timestamp: string
        readonly data: Record<string, unknown>
      }
    const found = () =>
      received
        .map(verify)
        .filter((payload) => payload.type === type)
        .filter((payload) => about === undefined || JSON.stringify(payload.data).includes(about))
    for (let waited = 0; waited < 50 && found().length < count; waited++) yield* Effect.sleep("100 millis")
    // A moment more, so that a message that should not be there has had its chance to arrive.
    yield* Effect.sleep("300 millis")
    return found()
  })

for (const backend of TestApp.backends) {
  const received: Array<ReceivedRequest> = []
  const outbox = makeOutbox()
  describe(`webhooks of audit entries and the spec's events (${backend.name})`, () => {
    layer(withReceiver(backend, received, outbox), { excludeTestServices: true })((it) => {
      it.effect("a refused sign-in and a sign-out reach the receiver signed, with ids and public fields only", () =>
        Effect.gen(function* () {
          const email = uniqueEmail("hooked")
          const wrong = "a-wrong-password-never-sent"
          expect((yield* login(email, wrong)).status).toBe(401)
          const [failed] = yield* messagesOf(received, "sign_in.failed", 1)
          expect(failed?.data).toMatchObject({ user_id: null, actor: { kind: "none" }, details: { identifier: email } })
          expect(Date.parse(failed?.timestamp ?? "")).toBeGreaterThan(Date.now() - 60_000)

          const user = yield* signUp("hooked-out")
          expect((yield* call("POST", "/logout", { token: user.access })).status).toBe(204)
          const [out] = yield* messagesOf(received, "session.logged_out", 1)
          expect(String(out?.data.user_id)).toBe(user.userId)

          // Only the subscribed types: the sign-in that succeeded went nowhere.
          const types = received.map((message) => (JSON.parse(message.body) as { type: string }).type)
          expect(types).not.toContain("sign_in.succeeded")
          expect(received.some((message) => message.body.includes(wrong))).toBe(false)
          expect(received.some((message) => message.body.includes(user.access))).toBe(false)
          expect(new Set(received.map((message) => message.headers["webhook-id"])).size).toBe(received.length)
          // The endpoint that is down failed every try meanwhile; the service is as ready as before.
          const ready = yield* Effect.flatMap(TestApp.TestApp, (app) => app.request("GET", "/readyz"))
          expect(ready.status).toBe(200)
        })
      )

      it.effect(
        "the spec's events leave with their change: a registration, its mail without the token, a sign-in and a sign-out",
        () =>
          Effect.gen(function* () {
            const email = uniqueEmail("spec-events")
            expect([201, 202]).toContain((yield* register(email)).status)
            // The same address again creates nothing, so no second after_register leaves.
            expect([202, 409]).toContain((yield* register(email)).status)
            const user = yield* signIn(email)
            expect((yield* call("POST", "/logout", { token: user.access })).status).toBe(204)

            const ofUser = (type: string) => messagesOf(received, type, 1, email)
            const registered = yield* ofUser("after_register")
            expect(registered).toHaveLength(1)
            expect(registered[0]?.data.user).toMatchObject({ email, is_verified: false })
            expect(registered[0]?.data.user).not.toHaveProperty("hashed_password")
            const mails = yield* ofUser("send_verification_email")
            expect(mails.map((payload) => payload.data)).toEqual([{ email }])
            expect(
              (yield* ofUser("after_login")).map((payload) => String((payload.data.user as { id: unknown }).id))
            ).toEqual([user.userId])
            expect(yield* ofUser("after_logout")).toHaveLength(1)
            expect(received.some((message) => message.body.includes(password))).toBe(false)
          })
      )

      it.effect(
        "a takeover by the mailed reset link tells the receiver: the notice, the squatter's password cleared, the user as verified",
        () =>
          Effect.gen(function* () {
            const victim = uniqueEmail("taken-over")
            // A squatter registers the address without proving it; its owner resets the password from the mail.
            expect([201, 202]).toContain((yield* register(victim)).status)
            expect((yield* call("POST", "/password-reset/request", { json: { email: victim } })).status).toBe(202)
            const token = yield* outbox.token("send_password_reset_email", victim)
            const reset = yield* call("POST", "/password-reset/confirm", {
              json: { token, new_password: "the-owner's-own-passphrase" }
            })
            expect(reset.status).toBe(200)

            // Two notices: what the takeover removed, and the reset itself.
            const notices = yield* messagesOf(received, "send_security_notice", 2, victim)
            const told = notices.map((payload) => payload.data as { email: string; notice: { kind: string } })
            expect(told.map((data) => data.notice.kind).sort()).toEqual(["password_reset", "taken_over"])
            expect(told.every((data) => data.email === victim)).toBe(true)
            const cleared = yield* messagesOf(received, "takeover.password_cleared", 1)
            const resetMessages = yield* messagesOf(received, "after_password_reset", 1, victim)
            expect(resetMessages).toHaveLength(1)
            const user = resetMessages[0]?.data.user as { id: unknown; is_verified: boolean }
            // The user as the reset left them: the mailed link proved the address.
            expect(user.is_verified).toBe(true)
            expect(cleared.some((payload) => String(payload.data.user_id) === String(user.id))).toBe(true)
            expect(received.some((message) => message.body.includes(token))).toBe(false)
          })
      )
    })
  })
}
