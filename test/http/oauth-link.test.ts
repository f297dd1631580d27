import { describe, expect, layer } from "@effect/vitest"
import { Effect } from "effect"
import { call, expectProblem, login, me, password, signUp } from "../support/flows.js"
import { makeOutbox } from "../support/Outbox.js"
import { appWithProviders, person, signInThrough, through } from "../support/oauthFlows.js"
import * as TestApp from "../support/TestApp.js"

const accounts = (token: string) =>
  Effect.map(call("GET", "/oauth/accounts", { token }), (reply) => {
    expect(reply.status).toBe(200)
    return reply.body as ReadonlyArray<{
      provider: string
      provider_user_id: string
      provider_email: string | null
      created_at: string
    }>
  })

const unlink = (provider: string, token: string) => call("DELETE", `/oauth/accounts/${provider}`, { token })

for (const backend of TestApp.backends) {
  describe(`OAuth linking (${backend.name})`, () => {
    const outbox = makeOutbox()
    layer(appWithProviders(backend, {}, { events: outbox.handlers }), { excludeTestServices: true })((it) => {
      it.effect(
        "links a provider account to the caller: no session made or changed, the user never verified by it",
        () =>
          Effect.gen(function* () {
            const session = yield* signUp("link")
            const who = person("link-gh", { email: "public@elsewhere.example" })
            const reply = yield* through("github", who, session.access)
            expect(reply.status).toBe(200)
            expect(reply.body).toEqual({
              provider: "github",
              provider_user_id: who.id,
              provider_email: "public@elsewhere.example"
            })
            expect(reply.headers.get("set-cookie")).toBeNull()
            const profile = yield* me(session.access)
            expect(profile.body).toMatchObject({ email: session.email, is_verified: false })
            const [listed] = yield* accounts(session.access)
            expect(listed).toMatchObject({ provider: "github", provider_user_id: who.id })
            expect(Date.parse(listed?.created_at ?? "")).not.toBeNaN()
            const [user, provider] = yield* outbox.next("after_oauth_link", session.email)
            expect(user).toMatchObject({ email: session.email })
            expect(provider).toBe("github")
            // The linked account now signs its user in.
            const signedIn = yield* signInThrough("github", who)
            expect(String(signedIn.user.id)).toBe(session.userId)
          })
      )

      it.effect(
        "relinking the caller's own account is 200 and refreshes its tokens, without a second after_oauth_link",
        () =>
          Effect.gen(function* () {
            const session = yield* signUp("relink")
            const who = person("relink")
            expect((yield* through("google", who, session.access)).status).toBe(200)
            expect((yield* through("google", who, session.access)).status).toBe(200)
            expect(yield* accounts(session.access)).toHaveLength(1)
            expect(yield* outbox.count("after_oauth_link", session.email)).toBe(1)
          })
      )

      it.effect("an account linked to another user is 409, and it stays where it is", () =>
        Effect.gen(function* () {
          const owner = yield* signUp("owner")
          const other = yield* signUp("other")
          const who = person("shared")
          expect((yield* through("discord", who, owner.access)).status).toBe(200)
          const conflict = expectProblem(
            yield* through("discord", who, other.access),
            409,
            "OAuthAccountAlreadyLinkedError"
          )
          expect(conflict.detail).toBe("This provider account is already linked to another user.")
          expect(yield* accounts(other.access)).toEqual([])
          expect((yield* accounts(owner.access)).map((account) => account.provider)).toEqual(["discord"])
        })
      )

      it.effect("a second account of a provider the caller linked already is 409", () =>
        Effect.gen(function* () {
          const session = yield* signUp("two")
          expect((yield* through("gitlab", person("first"), session.access)).status).toBe(200)
          const conflict = expectProblem(
            yield* through("gitlab", person("second"), session.access),
            409,
            "OAuthProviderAlreadyLinkedError"
          )
          expect(conflict.detail).toBe("You already linked a different account of this provider.")
          expect(yield* accounts(session.access)).toHaveLength(1)
        })
      )

      it.effect(
        "unlink: 404 when nothing of the provider is linked, 204 and after_oauth_unlink when the password remains",
        () =>
          Effect.gen(function* () {
            const session = yield* signUp("unlink")
            expectProblem(yield* unlink("google", session.access), 404, "NotFoundError")
            expect((yield* through("google", person(), session.access)).status).toBe(200)
            expect((yield* unlink("google", session.access)).status).toBe(204)
            expect(yield* accounts(session.access)).toEqual([])
            const [user, provider] = yield* outbox.next("after_oauth_unlink", session.email)
            expect(user).toMatchObject({ email: session.email })
            expect(provider).toBe("google")
            expectProblem(yield* unlink("google", session.access), 404, "NotFoundError")
          })
      )

      it.effect("racing unlinks of an OAuth-only user's two providers never leave it without a way to sign in", () =>
        Effect.gen(function* () {
          for (let round = 0; round < 5; round++) {
            const signedIn = yield* signInThrough("acme", person("race"))
            expect((yield* through("corp", person("race-corp"), signedIn.access)).status).toBe(200)
            const replies = yield* Effect.all([unlink("acme", signedIn.access), unlink("corp", signedIn.access)], {
              concurrency: "unbounded"
            })
            const left = yield* accounts(signedIn.access)
            expect(left.length, `round ${round}`).toBeGreaterThanOrEqual(1)
            expect(replies.filter((reply) => reply.status === 204).length).toBe(2 - left.length)
            for (const reply of replies.filter((reply) => reply.status !== 204)) {
              expectProblem(reply, 400, "LastSignInMethodError")
            }
          }
        })
      )

      it.effect(
        "unlink is refused for the last way to sign in; another provider counts, and so does a password set later",
        () =>
          Effect.gen(function* () {
            const who = person("only")
            const signedIn = yield* signInThrough("acme", who)
            const last = expectProblem(yield* unlink("acme", signedIn.access), 400, "LastSignInMethodError")
            expect(last.detail).toContain("only way to sign in")
            expect((yield* through("corp", person("corp"), signedIn.access)).status).toBe(200)
            expect((yield* unlink("acme", signedIn.access)).status).toBe(204)
            expectProblem(yield* unlink("corp", signedIn.access), 400, "LastSignInMethodError")
            // Rule 8: an OAuth-only user sets a password with change-password, no current one asked.
            const set = yield* call("POST", "/change-password", {
              json: { new_password: password },
              token: signedIn.access
            })
            expect(set.status).toBe(200)
            const withPassword = yield* login(who.email ?? "")
            expect(withPassword.status).toBe(200)
            const access = (withPassword.body as { access_token: string }).access_token
            expect((yield* unlink("corp", access)).status).toBe(204)
            expect(yield* accounts(access)).toEqual([])
          })
      )
    })
  })
}
