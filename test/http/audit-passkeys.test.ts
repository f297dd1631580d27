import { describe, expect, layer } from "@effect/vitest"
import { Effect, Redacted } from "effect"
import { Accounts } from "../../application/Accounts.js"
import { Email } from "../../domain/User.js"
import { call, password, signIn, signUp, uniqueEmail } from "../support/flows.js"
import { addPasskey, passkeyEnv, passkeySignIn } from "../support/passkeys.js"
import { SoftwareAuthenticator } from "../support/SoftwareAuthenticator.js"
import * as TestApp from "../support/TestApp.js"

interface Entry {
  readonly type: string
  readonly actor: { readonly kind: string }
  readonly details: Record<string, unknown>
}

for (const backend of TestApp.backends) {
  describe(`audit log of passkeys (${backend.name})`, () => {
    layer(TestApp.layer(backend, passkeyEnv), { excludeTestServices: true })((it) => {
      it.effect("registration, sign-in, a refused assertion and removal are recorded", () =>
        Effect.gen(function* () {
          const email = uniqueEmail("root")
          yield* Effect.flatMap(Accounts, (accounts) =>
            accounts.createSuperuser(Email.make(email), Redacted.make(password))
          )
          const admin = yield* signIn(email)
          const user = yield* signUp("passkeys")
          const authenticator = new SoftwareAuthenticator()
          const first = yield* addPasskey(user, authenticator)
          const second = yield* addPasskey(user, new SoftwareAuthenticator())
          expect((yield* passkeySignIn(authenticator, { email: user.email })).status).toBe(200)
          const forged = yield* passkeySignIn(authenticator, {
            email: user.email,
            overrides: { origin: "https://evil.example" }
          })
          expect(forged.status).toBe(401)
          expect((yield* call("DELETE", `/passkeys/${second.id}`, { token: user.access })).status).toBe(204)

          const reply = yield* call("GET", `/admin/audit?user_id=${encodeURIComponent(user.userId)}`, {
            token: admin.access
          })
          const entries = (reply.body as { events: ReadonlyArray<Entry> }).events
          expect(entries.map((entry) => entry.type)).toEqual([
            "passkey.removed",
            "sign_in.failed",
            "sign_in.succeeded",
            "passkey.registered",
            "passkey.registered",
            "sign_in.succeeded"
          ])
          expect(entries[0]?.details).toEqual({ passkey_id: second.id })
          expect(entries[1]).toMatchObject({ actor: { kind: "none" }, details: { method: "passkey" } })
          expect(entries[2]?.details).toMatchObject({ method: "passkey", passkey_id: first.id })
          expect(entries[4]).toMatchObject({
            actor: { kind: "user" },
            details: { passkey_id: first.id, device_name: "Test laptop" }
          })
        })
      )
    })
  })
}
