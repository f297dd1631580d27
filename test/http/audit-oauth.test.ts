import { describe, expect, layer } from "@effect/vitest"
import { Effect, Option, Redacted } from "effect"
import { Accounts } from "../../application/Accounts.js"
import { UserRepo } from "../../application/ports/UserRepo.js"
import { Email } from "../../domain/User.js"
import { call, password, type Session, signIn, signUp, uniqueEmail } from "../support/flows.js"
import {
  approve,
  appWithProviders,
  begin,
  Fake,
  type Person,
  type Provider,
  person,
  signInThrough
} from "../support/oauthFlows.js"
import * as TestApp from "../support/TestApp.js"

interface Entry {
  readonly type: string
  readonly user_id: string | number | null
  readonly actor: { readonly kind: string; readonly id: string | number | null }
  readonly ip_address: string | null
  readonly user_agent: string | null
  readonly details: Record<string, unknown>
}

const agent = "audit-oauth-test/1.0"
const headers = { "user-agent": agent }

/** A superuser made by the operator (as `create-superuser` does), signed in. */
const signUpSuperuser = Effect.gen(function* () {
  const email = uniqueEmail("root")
  yield* Effect.flatMap(Accounts, (accounts) => accounts.createSuperuser(Email.make(email), Redacted.make(password)))
  return yield* signIn(email)
})

/** Every entry the log holds of these query parameters, newest first. */
const entriesOf = (admin: Session, query: Record<string, string>) =>
  Effect.map(
    call("GET", `/admin/audit?${new URLSearchParams({ ...query, limit: "500" })}`, { token: admin.access }),
    (reply) => {
      expect(reply.status).toBe(200)
      return (reply.body as { events: ReadonlyArray<Entry> }).events
    }
  )

/** A whole OAuth flow from a client that names itself: a sign-in, or a link with a token. */
const flow = (provider: Provider, who: Person, token?: string) =>
  Effect.gen(function* () {
    const started = yield* begin(provider, token)
    const code = yield* approve(started, who)
    const path = `/oauth/${provider}${token === undefined ? "" : "/link"}/callback`
    return yield* call("POST", path, {
      json: { code, state: started.state, binding: started.binding },
      headers,
      ...(token === undefined ? {} : { token })
    })
  })

/** The user the sign-in or link answered, by the id the log keeps. */
const userIdOf = (reply: { readonly body: unknown }) => (reply.body as { user: { id: string | number } }).user.id

/** Everything a provider flow handed over that must stay out of the log: codes, PKCE verifiers, tokens. */
const providerSecrets = Effect.map(Fake, (fake) =>
  [
    ...fake.accessTokens(),
    ...fake.tokenRequests.flatMap((request) => [request.params.code, request.params.code_verifier]),
    ...fake.tokenRequests.map((request) => request.params.client_secret)
  ].filter((secret): secret is string => secret !== undefined && secret.length > 0)
)

for (const backend of TestApp.backends) {
  describe(`audit log of OAuth (${backend.name})`, () => {
    layer(appWithProviders(backend), { excludeTestServices: true })((it) => {
      it.effect("sign-ins are recorded with their provider and outcome, from the client that made them", () =>
        Effect.gen(function* () {
          const admin = yield* signUpSuperuser
          const who = person("audit-oauth")
          const created = yield* flow("google", who)
          expect(created.status, created.text).toBe(200)
          const userId = userIdOf(created)
          expect((yield* flow("google", who)).status).toBe(200)

          const [again, first] = yield* entriesOf(admin, { user_id: String(userId) })
          const signedIn = {
            type: "sign_in.succeeded",
            user_id: userId,
            actor: { kind: "user", id: userId },
            ip_address: "127.0.0.1",
            user_agent: agent
          }
          expect(first).toMatchObject({
            ...signedIn,
            details: { method: "oauth", provider: "google", outcome: "created", family_id: expect.any(String) }
          })
          expect(again).toMatchObject({
            ...signedIn,
            details: { method: "oauth", provider: "google", outcome: "linked" }
          })
        })
      )

      it.effect(
        "an auto-link names its outcome; a refusal is recorded against the email's holder, with its reason",
        () =>
          Effect.gen(function* () {
            const admin = yield* signUpSuperuser
            const holder = yield* signUp("audit-holder")
            const users = yield* UserRepo
            const stored = Option.getOrThrow(yield* users.findByLogin("email", holder.email))
            yield* users.setFlags(stored.id, { is_verified: true })
            expect((yield* flow("github", person("gh", { email: holder.email }))).status).toBe(200)
            // A second GitHub account with the same email: refused, for the holder linked one already.
            expect((yield* flow("github", person("gh2", { email: holder.email }))).status).toBe(400)
            const unvouched = person("unvouched", { verified: false })
            expect((yield* flow("discord", unvouched)).status).toBe(400)

            const [refused, autoLinked] = yield* entriesOf(admin, { user_id: holder.userId })
            expect(autoLinked).toMatchObject({
              type: "sign_in.succeeded",
              details: { method: "oauth", provider: "github", outcome: "auto_linked" }
            })
            expect(refused).toMatchObject({
              type: "sign_in.failed",
              user_id: holder.id,
              actor: { kind: "none", id: null },
              ip_address: "127.0.0.1",
              user_agent: agent,
              details: { method: "oauth", provider: "github", reason: "provider_already_linked" }
            })
            const failures = yield* entriesOf(admin, { type: "sign_in.failed" })
            expect(failures.find((entry) => entry.details.provider === "discord")).toMatchObject({
              user_id: null,
              actor: { kind: "none", id: null },
              user_agent: agent,
              details: { method: "oauth", provider: "discord", reason: "email_unverified" }
            })
          })
      )

      it.effect("a deactivated user's sign-in through its linked account is recorded as refused", () =>
        Effect.gen(function* () {
          const admin = yield* signUpSuperuser
          const who = person("audit-inactive")
          const signedIn = yield* signInThrough("acme", who)
          const users = yield* UserRepo
          const stored = Option.getOrThrow(yield* users.findByLogin("email", who.email ?? ""))
          yield* users.setFlags(stored.id, { is_active: false })
          expect((yield* flow("acme", who)).status).toBe(400)

          const [refused] = yield* entriesOf(admin, { user_id: String(signedIn.user.id) })
          expect(refused).toMatchObject({
            type: "sign_in.failed",
            user_id: signedIn.user.id,
            actor: { kind: "none", id: null },
            user_agent: agent,
            details: { method: "oauth", provider: "acme", reason: "inactive" }
          })
        })
      )

      it.effect("a link and an unlink are recorded as the user's own acts, with the provider", () =>
        Effect.gen(function* () {
          const admin = yield* signUpSuperuser
          const user = yield* signUp("audit-link")
          const linked = yield* flow("gitlab", person("gl"), user.access)
          expect(linked.status, linked.text).toBe(200)
          const unlinked = yield* call("DELETE", "/oauth/accounts/gitlab", { token: user.access, headers })
          expect(unlinked.status).toBe(204)

          const [unlink, link] = yield* entriesOf(admin, { user_id: user.userId })
          const ownAct = {
            user_id: user.id,
            actor: { kind: "user", id: user.id },
            ip_address: "127.0.0.1",
            user_agent: agent,
            details: { provider: "gitlab" }
          }
          expect(link).toMatchObject({ type: "oauth.linked", ...ownAct })
          expect(unlink).toMatchObject({ type: "oauth.unlinked", ...ownAct })
          // The provider, and nothing of the provider account or its tokens.
          expect([link?.details, unlink?.details]).toEqual([{ provider: "gitlab" }, { provider: "gitlab" }])
        })
      )

      it.effect("no provider code, verifier, token or client secret is anywhere in the log", () =>
        Effect.gen(function* () {
          const admin = yield* signUpSuperuser
          yield* flow("corp", person("audit-secrets"))
          const secrets = yield* providerSecrets
          expect(secrets.length).toBeGreaterThan(0)
          const log = JSON.stringify(yield* entriesOf(admin, {}))
          for (const secret of secrets) expect(log).not.toContain(secret)
        })
      )
    })
  })
}
