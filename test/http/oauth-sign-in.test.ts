import { describe, expect, layer } from "@effect/vitest"
import { Effect, Option } from "effect"
import { Cryptography } from "../../application/ports/Cryptography.js"
import { OAuthAccountRepo } from "../../application/ports/OAuthAccountRepo.js"
import { UserRepo } from "../../application/ports/UserRepo.js"
import { call, expectProblem, login, me, password, signUp } from "../support/flows.js"
import { makeOutbox } from "../support/Outbox.js"
import { appWithProviders, Fake, person, providers, signInThrough, through } from "../support/oauthFlows.js"
import * as TestApp from "../support/TestApp.js"

const refusal = "This provider account cannot be used to sign in here"

/** The stored user holding `email`, which must exist. */
const stored = (email: string) =>
  Effect.flatMap(UserRepo, (users) => users.findByLogin("email", email)).pipe(Effect.map(Option.getOrThrow))

const linkedProviders = (token: string) =>
  Effect.map(call("GET", "/oauth/accounts", { token }), (reply) => {
    expect(reply.status).toBe(200)
    return (reply.body as ReadonlyArray<{ provider: string }>).map((account) => account.provider)
  })

for (const backend of TestApp.backends) {
  describe(`OAuth sign-in (${backend.name})`, () => {
    const outbox = makeOutbox()
    layer(appWithProviders(backend, {}, { events: outbox.handlers }), { excludeTestServices: true })((it) => {
      it.effect("every provider, built in, from settings or from code, makes a new verified user and signs it in", () =>
        Effect.gen(function* () {
          const listed = yield* call("GET", "/oauth/providers")
          expect(listed.body).toEqual({ providers: [...providers] })
          for (const provider of providers) {
            const who = person(provider)
            const signedIn = yield* signInThrough(provider, who)
            expect(signedIn.user).toMatchObject({ email: who.email, is_verified: true })
            expect((yield* me(signedIn.access)).status).toBe(200)
            // A new OAuth user has no password: no password signs it in.
            expectProblem(yield* login(who.email ?? "", password), 401, "AuthenticationError")
            expect(yield* linkedProviders(signedIn.access)).toEqual([provider])
          }
        })
      )

      it.effect("PKCE: the built-in kinds and the custom providers send the verifier the challenge was made of", () =>
        Effect.gen(function* () {
          const fake = yield* Fake
          for (const provider of providers) {
            const before = fake.tokenRequests.length
            yield* signInThrough(provider, person(provider))
            const exchange = fake.tokenRequests[before]
            // corp, added in code without `pkce`, uses it too; the fake refuses a verifier that does not match.
            expect(exchange?.params.code_verifier, provider).toEqual(expect.any(String))
          }
        })
      )

      it.effect("the provider's tokens are stored sealed: the store holds no token the provider issued", () =>
        Effect.gen(function* () {
          const fake = yield* Fake
          const who = person("sealed")
          yield* signInThrough("google", who)
          const issued = fake.accessTokens().at(-1) ?? ""
          const account = Option.getOrThrow(
            yield* Effect.flatMap(OAuthAccountRepo, (repo) => repo.findByProviderAccount("google", who.id))
          )
          const stored = Option.getOrThrow(account.access_token)
          expect(stored).not.toContain(issued)
          expect(Option.isSome(account.refresh_token)).toBe(true)
          expect((yield* Cryptography).open(stored)).toEqual(Option.some(issued))
        })
      )

      it.effect("a provider account signs its own user in again, and after_oauth_login says it is not new", () =>
        Effect.gen(function* () {
          const who = person("again")
          const first = yield* signInThrough("github", who)
          const second = yield* signInThrough("github", { ...who, email: "changed-at-github@example.com" })
          expect(second.user.id).toBe(first.user.id)
          expect(second.user.email).toBe(who.email)
          const [user, provider, isNew] = yield* outbox.next("after_oauth_login", who.email ?? "", 2)
          expect(user).toMatchObject({ email: who.email })
          expect(provider).toBe("github")
          expect(isNew).toBe(false)
        })
      )

      it.effect(
        "a new user fires after_register, after_oauth_register with the mapped user info, and after_oauth_login",
        () =>
          Effect.gen(function* () {
            const who = person("events", { name: "Ada" })
            yield* signInThrough("discord", who)
            const email = who.email ?? ""
            const [registered] = yield* outbox.next("after_register", email)
            expect(registered).toMatchObject({ email, is_verified: true })
            const [user, info] = yield* outbox.next("after_oauth_register", email)
            expect(user).toMatchObject({ email })
            // Discord: the display name is global_name, the avatar hash becomes the CDN URL.
            expect(info).toMatchObject({
              provider: "discord",
              provider_user_id: who.id,
              email,
              email_verified: true,
              name: "Ada",
              picture: `https://cdn.discordapp.com/avatars/${who.id}/a1b2c3.png`
            })
            const [, provider, isNew] = yield* outbox.next("after_oauth_login", email)
            expect(provider).toBe("discord")
            expect(isNew).toBe(true)
          })
      )

      it.effect(
        "auto-link: a verified user holding the provider's verified email gets the account linked and keeps its password",
        () =>
          Effect.gen(function* () {
            const session = yield* signUp("autolink")
            const users = yield* UserRepo
            yield* users.setFlags((yield* stored(session.email)).id, { is_verified: true })
            const signedIn = yield* signInThrough("google", person("x", { email: session.email }))
            expect(String(signedIn.user.id)).toBe(session.userId)
            expect((yield* me(session.access)).status).toBe(200)
            expect((yield* login(session.email)).status).toBe(200)
            expect(yield* linkedProviders(signedIn.access)).toEqual(["google"])
          })
      )

      it.effect(
        "takeover guard: auto-linking to an unverified account ends its sessions, drops its password and verifies it",
        () =>
          Effect.gen(function* () {
            const squatter = yield* signUp("squat")
            const owner = person("owner", { email: squatter.email })
            const signedIn = yield* signInThrough("gitlab", owner)
            expect(String(signedIn.user.id)).toBe(squatter.userId)
            expect(signedIn.user.is_verified).toBe(true)
            expectProblem(yield* me(squatter.access), 401, "TokenBlacklistedError")
            expect((yield* call("POST", "/refresh", { json: { refresh_token: squatter.refresh } })).status).toBe(401)
            expectProblem(yield* login(squatter.email), 401, "AuthenticationError")
            const user = yield* stored(squatter.email)
            expect(Option.isNone(user.hashed_password)).toBe(true)
            expect(user.is_verified).toBe(true)
            expect((yield* me(signedIn.access)).status).toBe(200)
          })
      )

      it.effect("an email the provider does not vouch for neither makes a user nor links one", () =>
        Effect.gen(function* () {
          const stranger = person("unverified", { verified: false })
          for (const provider of providers) {
            const refused = expectProblem(yield* through(provider, stranger), 400, "OAuthError")
            expect(refused.detail).toContain(refusal)
          }
          const users = yield* UserRepo
          expect(Option.isNone(yield* users.findByLogin("email", stranger.email ?? ""))).toBe(true)

          const holder = yield* signUp("holder")
          yield* users.setFlags((yield* stored(holder.email)).id, { is_verified: true })
          expectProblem(
            yield* through("google", person("y", { email: holder.email, verified: false })),
            400,
            "OAuthError"
          )
          expect(yield* linkedProviders(holder.access)).toEqual([])
          expect((yield* me(holder.access)).status).toBe(200)
        })
      )

      it.effect("no email from the provider is refused; so is an email no address can be made of", () =>
        Effect.gen(function* () {
          expectProblem(yield* through("github", person("none", { email: null })), 400, "OAuthError")
          expectProblem(yield* through("google", person("bad", { email: "a,b@evil.example" })), 400, "OAuthError")
        })
      )

      it.effect("a second account of a provider the email's holder linked already is refused, in the same words", () =>
        Effect.gen(function* () {
          const first = person("twice")
          yield* signInThrough("github", first)
          const refused = expectProblem(
            yield* through("github", person("other", { email: first.email })),
            400,
            "OAuthError"
          )
          expect(refused.detail).toContain(refusal)
        })
      )

      it.effect("an inactive user is not signed in through its linked account, nor linked by its email", () =>
        Effect.gen(function* () {
          const who = person("inactive")
          const signedIn = yield* signInThrough("acme", who)
          const users = yield* UserRepo
          yield* users.setFlags((yield* stored(who.email ?? "")).id, { is_active: false })
          expect(signedIn.user.email).toBe(who.email)
          expectProblem(yield* through("acme", who), 400, "OAuthError")
          // Nor is a deactivated holder of the email linked, taken over or changed.
          const holder = yield* signUp("inactive-holder")
          const held = yield* stored(holder.email)
          yield* users.setFlags(held.id, { is_active: false })
          expectProblem(yield* through("google", person("h", { email: holder.email })), 400, "OAuthError")
          const after = yield* stored(holder.email)
          expect(after.is_verified).toBe(false)
          expect(after.hashed_password).toEqual(held.hashed_password)
          expect(yield* Effect.flatMap(OAuthAccountRepo, (repo) => repo.listOf(held.id))).toEqual([])
        })
      )
    })
  })
}

describe("OAuth sign-in with OAUTH_AUTO_LINK_BY_EMAIL=false", () => {
  layer(appWithProviders("memory:", { SERVICE_OAUTH_AUTO_LINK_BY_EMAIL: "false" }), { excludeTestServices: true })(
    (it) => {
      it.effect("the holder of the email is never linked, verified or not; new emails still make users", () =>
        Effect.gen(function* () {
          const holder = yield* signUp("nolink")
          const users = yield* UserRepo
          yield* users.setFlags((yield* stored(holder.email)).id, { is_verified: true })
          expectProblem(yield* through("google", person("z", { email: holder.email })), 400, "OAuthError")
          expect(yield* linkedProviders(holder.access)).toEqual([])
          expect((yield* login(holder.email)).status).toBe(200)
          yield* signInThrough("google", person("fresh"))
        })
      )
    }
  )
})
