import { describe, expect, layer } from "@effect/vitest"
import { Effect } from "effect"
import { AuditLog } from "../../application/ports/AuditLog.js"
import type { AuditEventType } from "../../domain/Audit.js"
import { call, expectProblem, register, uniqueEmail } from "../support/flows.js"
import { makeOutbox } from "../support/Outbox.js"
import * as TestApp from "../support/TestApp.js"

/**
 * Wrong codes for one sign-in request sent at once, on every store (docs/behaviour.md, "Sign-in
 * by mail"): each is refused alike, and their counts, which run after the
 * answers, void the request all the same. Lockout is off so that every code reaches the check
 * (test/http/email-sign-in.test.ts holds the codes that count toward it).
 */

const env = { SERVICE_EMAIL_SIGN_IN_ENABLED: "true", SERVICE_LOCKOUT_ENABLED: "false" }

const confirm = (body: Record<string, unknown>) => call("POST", "/email-sign-in/confirm", { json: body })

/** How many entries of `type` the log holds, once it holds at least `least` (they are written after the answers). */
const entries = (type: AuditEventType, least: number) =>
  Effect.flatMap(AuditLog, (log) => Effect.map(log.list({ type, limit: 100 }), (found) => found.length)).pipe(
    Effect.delay("20 millis"),
    Effect.repeat({ until: (found) => found >= least, times: 100 })
  )

for (const backend of TestApp.backendsWithFile()) {
  describe(`wrong sign-in codes at once (${backend.name})`, () => {
    const outbox = makeOutbox()
    layer(TestApp.layer(backend, env, { deployment: { events: outbox.handlers } }), { excludeTestServices: true })(
      (it) => {
        it.effect("twenty wrong codes at once are each refused with 400, and void the request", () =>
          Effect.gen(function* () {
            const email = uniqueEmail("burst")
            expect((yield* register(email)).status).toBe(202)
            expect((yield* call("POST", "/email-sign-in/request", { json: { email } })).status).toBe(202)
            const mail = yield* outbox.signInMail(email)
            const wrong = mail.code === "000000" ? "111111" : "000000"
            const replies = yield* Effect.all(
              Array.from({ length: 20 }, () => confirm({ email, code: wrong })),
              { concurrency: "unbounded" }
            )
            for (const reply of replies) expectProblem(reply, 400, "SignInCodeError")
            expectProblem(yield* confirm({ email, code: mail.code }), 400, "SignInCodeError")
            expectProblem(yield* confirm({ token: mail.token }), 401, "TokenError")
            expect(yield* entries("email_sign_in.voided", 1)).toBe(1)
            expect(yield* entries("email_sign_in.code_failed", 4)).toBe(4)
          })
        )
      }
    )
  })
}
