import { describe, expect, it } from "@effect/vitest"
import { DateTime, Effect, Logger, LogLevel, Option, Schema, TestClock } from "effect"
import { type NewLinkedAccount, OAuthAccountRepo } from "../../application/ports/OAuthAccountRepo.js"
import { UserRepo } from "../../application/ports/UserRepo.js"
import { OAuthAccountAlreadyLinkedError, OAuthProviderAlreadyLinkedError } from "../../domain/errors.js"
import { LinkedAccount, LinkedAccountId } from "../../domain/OAuth.js"
import { Email, type User, UserId } from "../../domain/User.js"
import { databases } from "../support/databases.js"

/** The OAuthAccountRepo contract, run unchanged against every adapter. */

/** An instant with a millisecond part, so that a store rounding to seconds would show. */
const START = Date.UTC(2033, 2, 3, 4, 5, 6, 789)
const at = (offsetMillis: number) => DateTime.unsafeMake(START + offsetMillis)

const encode = Schema.encodeSync(LinkedAccount)
const email = Schema.decodeSync(Email)

const createUser = (address: string) =>
  Effect.flatMap(UserRepo, (users) =>
    users.create({
      email: email(address),
      hashed_password: Option.none(),
      is_active: true,
      is_verified: true,
      is_superuser: false
    })
  )

const newAccount = (
  owner: Pick<User, "id">,
  provider: string,
  providerUserId: string,
  overrides: Partial<NewLinkedAccount> = {}
): NewLinkedAccount => ({
  provider,
  provider_user_id: providerUserId,
  user_id: owner.id,
  provider_email: Option.some(`${providerUserId}@${provider}.example`),
  access_token: Option.some(`v1.sealed-access-${providerUserId}`),
  refresh_token: Option.some(`v1.sealed-refresh-${providerUserId}`),
  expires_at: Option.some(at(3_600_000 + 1)),
  ...overrides
})

const link = (account: NewLinkedAccount) => Effect.flatMap(OAuthAccountRepo, (accounts) => accounts.link(account))

const providersOf = (owner: UserId) =>
  Effect.flatMap(OAuthAccountRepo, (accounts) => accounts.listOf(owner)).pipe(
    Effect.map((listed) => listed.map((account) => account.provider))
  )

const found = <A>(option: Option.Option<A>): A => Option.getOrThrowWith(option, () => new Error("expected a value"))

for (const backend of databases) {
  const run = <A, E>(effect: Effect.Effect<A, E, UserRepo | OAuthAccountRepo>) =>
    Effect.gen(function* () {
      yield* TestClock.setTime(START)
      return yield* effect
    }).pipe(Effect.provide(backend.repositories()))

  describe.skipIf(backend.skip)(`OAuthAccountRepo contract (${backend.name})`, () => {
    it.effect("link answers the stored account, found again every way, every field to the millisecond", () =>
      run(
        Effect.gen(function* () {
          const accounts = yield* OAuthAccountRepo
          const alice = yield* createUser("alice@example.com")
          const linked = yield* link(newAccount(alice, "github", "42"))
          expect(encode(linked)).toEqual({
            id: linked.id,
            provider: "github",
            provider_user_id: "42",
            user_id: alice.id,
            provider_email: "42@github.example",
            access_token: "v1.sealed-access-42",
            refresh_token: "v1.sealed-refresh-42",
            expires_at: DateTime.formatIso(at(3_600_001)),
            created_at: DateTime.formatIso(at(0))
          })
          expect(DateTime.toEpochMillis(found(linked.expires_at))).toBe(START + 3_600_001)

          expect(encode(found(yield* accounts.findByProviderAccount("github", "42")))).toEqual(encode(linked))
          expect(encode(found(yield* accounts.findOf(alice.id, "github")))).toEqual(encode(linked))
          expect((yield* accounts.listOf(alice.id)).map((account) => encode(account))).toEqual([encode(linked)])
          expect(yield* accounts.countOf(alice.id)).toBe(1)
        })
      )
    )

    it.effect("keeps an account without email, tokens or expiry as such", () =>
      run(
        Effect.gen(function* () {
          const accounts = yield* OAuthAccountRepo
          const alice = yield* createUser("alice@example.com")
          const none = Option.none()
          yield* link(
            newAccount(alice, "discord", "7", {
              provider_email: none,
              access_token: none,
              refresh_token: none,
              expires_at: none
            })
          )
          const stored = found(yield* accounts.findOf(alice.id, "discord"))
          expect([stored.provider_email, stored.access_token, stored.refresh_token, stored.expires_at]).toEqual([
            none,
            none,
            none,
            none
          ])
        })
      )
    )

    it.effect("finds nothing for another provider, another provider user id or another user", () =>
      run(
        Effect.gen(function* () {
          const accounts = yield* OAuthAccountRepo
          const alice = yield* createUser("alice@example.com")
          const bob = yield* createUser("bob@example.com")
          yield* link(newAccount(alice, "github", "42"))
          expect(yield* accounts.findByProviderAccount("google", "42")).toEqual(Option.none())
          expect(yield* accounts.findByProviderAccount("github", "43")).toEqual(Option.none())
          expect(yield* accounts.findOf(bob.id, "github")).toEqual(Option.none())
          expect(yield* accounts.findOf(alice.id, "google")).toEqual(Option.none())
          expect(yield* accounts.listOf(bob.id)).toEqual([])
          expect(yield* accounts.countOf(bob.id)).toBe(0)
        })
      )
    )

    it.effect("a provider account linked to anyone cannot be linked again, not even to the same user", () =>
      run(
        Effect.gen(function* () {
          const accounts = yield* OAuthAccountRepo
          const alice = yield* createUser("alice@example.com")
          const bob = yield* createUser("bob@example.com")
          const first = yield* link(newAccount(alice, "github", "42"))
          expect(yield* Effect.flip(link(newAccount(bob, "github", "42")))).toBeInstanceOf(
            OAuthAccountAlreadyLinkedError
          )
          expect(yield* Effect.flip(link(newAccount(alice, "github", "42")))).toBeInstanceOf(
            OAuthAccountAlreadyLinkedError
          )
          expect(found(yield* accounts.findByProviderAccount("github", "42")).id).toBe(first.id)
          expect(yield* accounts.countOf(bob.id)).toBe(0)
        })
      )
    )

    it.effect("a user with an account of a provider cannot link a second one of it", () =>
      run(
        Effect.gen(function* () {
          const accounts = yield* OAuthAccountRepo
          const alice = yield* createUser("alice@example.com")
          yield* link(newAccount(alice, "github", "42"))
          expect(yield* Effect.flip(link(newAccount(alice, "github", "43")))).toBeInstanceOf(
            OAuthProviderAlreadyLinkedError
          )
          expect(yield* accounts.findByProviderAccount("github", "43")).toEqual(Option.none())
          // The same provider user id at another provider is another account.
          yield* link(newAccount(alice, "google", "42"))
          expect(yield* providersOf(alice.id)).toEqual(["github", "google"])
        })
      )
    )

    it.effect("a link breaking both rules is refused as an account already linked", () =>
      run(
        Effect.gen(function* () {
          const alice = yield* createUser("alice@example.com")
          const bob = yield* createUser("bob@example.com")
          yield* link(newAccount(alice, "github", "42"))
          yield* link(newAccount(bob, "github", "7"))
          expect(yield* Effect.flip(link(newAccount(bob, "github", "42")))).toBeInstanceOf(
            OAuthAccountAlreadyLinkedError
          )
        })
      )
    )

    it.effect("of 20 parallel links of one provider account to 20 users, exactly one is stored", () =>
      run(
        Effect.gen(function* () {
          const accounts = yield* OAuthAccountRepo
          const users = yield* Effect.forEach(
            Array.from({ length: 20 }, (_, index) => index),
            (index) => createUser(`user${index}@example.com`)
          )
          const results = yield* Effect.all(
            users.map((owner) => Effect.either(link(newAccount(owner, "github", "42")))),
            { concurrency: "unbounded" }
          )
          const won = results.flatMap((result, index) => (result._tag === "Right" ? [index] : []))
          expect(won).toHaveLength(1)
          for (const result of results) {
            if (result._tag === "Left") expect(result.left).toBeInstanceOf(OAuthAccountAlreadyLinkedError)
          }
          const winner = users[won[0] ?? -1]
          expect(found(yield* accounts.findByProviderAccount("github", "42")).user_id).toBe(winner?.id)
          const counts = yield* Effect.forEach(users, (owner) => accounts.countOf(owner.id))
          expect(counts.reduce((sum, count) => sum + count, 0)).toBe(1)
        })
      )
    )

    it.effect("listOf answers only the user's accounts, in code-unit order of provider names", () =>
      run(
        Effect.gen(function* () {
          const alice = yield* createUser("alice@example.com")
          const bob = yield* createUser("bob@example.com")
          for (const provider of ["google", "gitlab", "github", "git_x", "my-idp"]) {
            yield* link(newAccount(alice, provider, `alice-${provider}`))
          }
          yield* link(newAccount(bob, "discord", "bob"))
          expect(yield* providersOf(alice.id)).toEqual(["git_x", "github", "gitlab", "google", "my-idp"])
          expect(yield* providersOf(bob.id)).toEqual(["discord"])
        })
      )
    )

    it.effect("updateTokens replaces tokens, email and expiry, and keeps the refresh token when none comes", () =>
      run(
        Effect.gen(function* () {
          const accounts = yield* OAuthAccountRepo
          const alice = yield* createUser("alice@example.com")
          const linked = yield* link(newAccount(alice, "google", "sub-1"))
          const updated = yield* accounts.updateTokens(linked.id, {
            provider_email: Option.some("new@example.com"),
            access_token: Option.some("v1.sealed-access-2"),
            refresh_token: Option.none(),
            expires_at: Option.some(at(7_200_000 + 2))
          })
          const expected = new LinkedAccount({
            ...linked,
            provider_email: Option.some("new@example.com"),
            access_token: Option.some("v1.sealed-access-2"),
            expires_at: Option.some(at(7_200_002))
          })
          expect(encode(found(updated))).toEqual(encode(expected))
          expect(encode(found(yield* accounts.findOf(alice.id, "google")))).toEqual(encode(expected))

          yield* accounts.updateTokens(linked.id, {
            provider_email: Option.none(),
            access_token: Option.none(),
            refresh_token: Option.some("v1.sealed-refresh-2"),
            expires_at: Option.none()
          })
          const cleared = found(yield* accounts.findOf(alice.id, "google"))
          expect(encode(cleared)).toEqual({
            ...encode(linked),
            provider_email: null,
            access_token: null,
            refresh_token: "v1.sealed-refresh-2",
            expires_at: null
          })
        })
      )
    )

    it.effect("updateTokens answers none for an account that does not exist", () =>
      run(
        Effect.gen(function* () {
          const accounts = yield* OAuthAccountRepo
          const none = Option.none()
          const tokens = { provider_email: none, access_token: none, refresh_token: none, expires_at: none }
          expect(yield* accounts.updateTokens(LinkedAccountId.make("no-such-account"), tokens)).toEqual(Option.none())
        })
      )
    )

    it.effect("unlink removes the user's account of that provider once; another can then be linked", () =>
      run(
        Effect.gen(function* () {
          const accounts = yield* OAuthAccountRepo
          const alice = yield* createUser("alice@example.com")
          const bob = yield* createUser("bob@example.com")
          yield* link(newAccount(alice, "github", "42"))
          yield* link(newAccount(alice, "google", "g-1"))
          yield* link(newAccount(bob, "github", "7"))

          expect(yield* accounts.unlink(bob.id, "google")).toBe(false)
          expect(yield* accounts.unlink(alice.id, "github")).toBe(true)
          expect(yield* accounts.unlink(alice.id, "github")).toBe(false)
          expect(yield* providersOf(alice.id)).toEqual(["google"])
          expect(yield* accounts.countOf(alice.id)).toBe(1)
          expect(yield* accounts.findByProviderAccount("github", "42")).toEqual(Option.none())
          expect(yield* providersOf(bob.id)).toEqual(["github"])

          yield* link(newAccount(alice, "github", "43"))
          yield* link(newAccount(bob, "gitlab", "42"))
          expect(yield* accounts.countOf(alice.id)).toBe(2)
        })
      )
    )

    it.effect("deleting a user deletes its accounts, and frees them for another user", () =>
      run(
        Effect.gen(function* () {
          const users = yield* UserRepo
          const accounts = yield* OAuthAccountRepo
          const alice = yield* createUser("alice@example.com")
          const bob = yield* createUser("bob@example.com")
          const alicesGithub = yield* link(newAccount(alice, "github", "42"))
          yield* link(newAccount(alice, "google", "g-1"))
          yield* link(newAccount(bob, "github", "7"))

          yield* users.delete(alice.id)
          expect(yield* accounts.findByProviderAccount("github", "42")).toEqual(Option.none())
          expect(yield* accounts.findOf(alice.id, "google")).toEqual(Option.none())
          expect(yield* accounts.listOf(alice.id)).toEqual([])
          expect(yield* accounts.countOf(alice.id)).toBe(0)
          const none = Option.none()
          const tokens = { provider_email: none, access_token: none, refresh_token: none, expires_at: none }
          expect(yield* accounts.updateTokens(alicesGithub.id, tokens)).toEqual(Option.none())
          expect(yield* providersOf(bob.id)).toEqual(["github"])

          const carol = yield* createUser("carol@example.com")
          expect((yield* link(newAccount(carol, "github", "42"))).user_id).toBe(carol.id)
        })
      )
    )

    it.effect("a user that does not exist cannot be linked", () =>
      run(
        Effect.gen(function* () {
          const accounts = yield* OAuthAccountRepo
          const ghost = { id: UserId.make("no-such-user") }
          const exit = yield* Effect.exit(link(newAccount(ghost, "github", "42")))
          expect(exit._tag).toBe("Failure")
          expect(yield* accounts.findByProviderAccount("github", "42")).toEqual(Option.none())
        }).pipe(Effect.provide(Logger.minimumLogLevel(LogLevel.None)))
      )
    )
  })
}
