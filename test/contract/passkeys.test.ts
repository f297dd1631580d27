import { randomUUID } from "node:crypto"
import { describe, expect, it } from "@effect/vitest"
import { DateTime, Effect, Option, Schema, TestClock } from "effect"
import { PasskeyRepo } from "../../application/ports/PasskeyRepo.js"
import { UserRepo } from "../../application/ports/UserRepo.js"
import { CredentialId, Passkey, PasskeyCredentialTakenError, PasskeyId } from "../../domain/Passkey.js"
import { Email, type User, UserId } from "../../domain/User.js"
import { databases } from "../support/databases.js"

/** An instant with a millisecond part, so that a store rounding to seconds would show. */
const START = Date.UTC(2034, 4, 5, 6, 7, 8, 901)

const encodePasskey = Schema.encodeSync(Passkey)
const email = Schema.decodeSync(Email)
const at = (offsetMillis: number) => DateTime.unsafeMake(START + offsetMillis)
const credential = (name: string) => CredentialId.make(Buffer.from(`credential-${name}`).toString("base64url"))

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

const passkey = (owner: User, name: string, createdAt: DateTime.Utc, overrides: Partial<Passkey> = {}) =>
  new Passkey({
    id: PasskeyId.make(randomUUID()),
    user_id: owner.id,
    credential_id: credential(name),
    public_key: Buffer.from(`cose-key-of-${name}`).toString("base64url"),
    sign_count: 0,
    transports: ["internal", "hybrid"],
    backed_up: false,
    device_name: `Device ${name}`,
    created_at: createdAt,
    last_used_at: Option.none(),
    ...overrides
  })

const add = (one: Passkey) => Effect.flatMap(PasskeyRepo, (passkeys) => passkeys.add(one))

/** The stored passkey of a credential, encoded, so that adapters compare field by field. */
const stored = (name: string) =>
  Effect.flatMap(PasskeyRepo, (passkeys) => passkeys.findByCredentialId(credential(name))).pipe(
    Effect.map(Option.map(({ passkey }) => encodePasskey(passkey)))
  )

for (const backend of databases) {
  const run = <A, E>(effect: Effect.Effect<A, E, UserRepo | PasskeyRepo>) =>
    Effect.gen(function* () {
      yield* TestClock.setTime(START)
      return yield* effect
    }).pipe(Effect.provide(backend.repositories()))

  describe.skipIf(backend.skip)(`PasskeyRepo contract (${backend.name})`, () => {
    it.effect("findByCredentialId answers the passkey, every field to the millisecond, with its owner", () =>
      run(
        Effect.gen(function* () {
          const passkeys = yield* PasskeyRepo
          const alice = yield* createUser("alice@example.com")
          const phone = passkey(alice, "phone", at(0), {
            sign_count: 0xffff_ffff,
            transports: ["usb", "nfc", "ble"],
            backed_up: true,
            device_name: "Alice's “phone” 📱",
            last_used_at: Option.some(at(86_400_000 + 7))
          })
          const key = passkey(alice, "key", at(1), { transports: [] })
          yield* add(phone)
          yield* add(key)

          const found = Option.getOrThrow(yield* passkeys.findByCredentialId(phone.credential_id))
          expect(encodePasskey(found.passkey)).toEqual(encodePasskey(phone))
          expect(found.user.id).toBe(alice.id)
          expect(found.user.email).toBe(alice.email)
          expect(yield* stored("key")).toEqual(Option.some(encodePasskey(key)))
          expect(yield* stored("unknown")).toEqual(Option.none())
        })
      )
    )

    it.effect("a credential id is registered once, to whoever: a second add fails and changes nothing", () =>
      run(
        Effect.gen(function* () {
          const passkeys = yield* PasskeyRepo
          const alice = yield* createUser("alice@example.com")
          const bob = yield* createUser("bob@example.com")
          const original = passkey(alice, "shared", at(0))
          yield* add(original)

          for (const owner of [alice, bob]) {
            const again = passkey(owner, "shared", at(5), { public_key: "b3RoZXIta2V5" })
            expect(yield* Effect.flip(add(again))).toBeInstanceOf(PasskeyCredentialTakenError)
          }
          expect(yield* stored("shared")).toEqual(Option.some(encodePasskey(original)))
          expect(yield* passkeys.countOf(alice.id)).toBe(1)
          expect(yield* passkeys.countOf(bob.id)).toBe(0)
        })
      )
    )

    it.effect("listOf, countOf and credentialsOf answer the user's own passkeys, oldest first", () =>
      run(
        Effect.gen(function* () {
          const passkeys = yield* PasskeyRepo
          const alice = yield* createUser("alice@example.com")
          const bob = yield* createUser("bob@example.com")
          const laptop = passkey(alice, "laptop", at(2_000), { transports: ["internal"] })
          const phone = passkey(alice, "phone", at(1_000), { transports: ["hybrid", "internal"] })
          const key = passkey(alice, "key", at(3_000), { transports: [] })
          const bobs = passkey(bob, "bobs", at(0))
          for (const one of [laptop, phone, key, bobs]) yield* add(one)

          const listed = yield* passkeys.listOf(alice.id)
          expect(listed.map((one) => encodePasskey(one))).toEqual([phone, laptop, key].map((one) => encodePasskey(one)))
          expect(yield* passkeys.countOf(alice.id)).toBe(3)
          expect(yield* passkeys.credentialsOf(alice.id)).toEqual([
            { credential_id: phone.credential_id, transports: ["hybrid", "internal"] },
            { credential_id: laptop.credential_id, transports: ["internal"] },
            { credential_id: key.credential_id, transports: [] }
          ])
          expect((yield* passkeys.listOf(bob.id)).map((one) => one.id)).toEqual([bobs.id])

          const nobody = UserId.make("no-such-user")
          expect(yield* passkeys.listOf(nobody)).toEqual([])
          expect(yield* passkeys.countOf(nobody)).toBe(0)
          expect(yield* passkeys.credentialsOf(nobody)).toEqual([])
        })
      )
    )

    it.effect("deleteOfUser removes the owner's passkey once, and never another user's", () =>
      run(
        Effect.gen(function* () {
          const passkeys = yield* PasskeyRepo
          const alice = yield* createUser("alice@example.com")
          const bob = yield* createUser("bob@example.com")
          const alices = passkey(alice, "alices", at(0))
          const bobs = passkey(bob, "bobs", at(0))
          yield* add(alices)
          yield* add(bobs)

          expect(yield* passkeys.deleteOfUser(alice.id, bobs.id)).toBe(false)
          expect(yield* stored("bobs")).toEqual(Option.some(encodePasskey(bobs)))
          expect(yield* passkeys.deleteOfUser(alice.id, PasskeyId.make(randomUUID()))).toBe(false)

          expect(yield* passkeys.deleteOfUser(alice.id, alices.id)).toBe(true)
          expect(yield* stored("alices")).toEqual(Option.none())
          expect(yield* passkeys.countOf(alice.id)).toBe(0)
          expect(yield* passkeys.deleteOfUser(alice.id, alices.id)).toBe(false)
          expect(yield* passkeys.countOf(bob.id)).toBe(1)
        })
      )
    )

    it.effect("advanceSignCount sets the count and last use only while the stored count is the expected one", () =>
      run(
        Effect.gen(function* () {
          const passkeys = yield* PasskeyRepo
          const alice = yield* createUser("alice@example.com")
          const key = passkey(alice, "key", at(0), { sign_count: 5 })
          yield* add(key)

          expect(yield* passkeys.advanceSignCount(key.id, 4, 9, at(1_001))).toBe(false)
          expect(yield* stored("key")).toEqual(Option.some(encodePasskey(key)))

          expect(yield* passkeys.advanceSignCount(key.id, 5, 6, at(2_002))).toBe(true)
          const advanced = new Passkey({ ...key, sign_count: 6, last_used_at: Option.some(at(2_002)) })
          expect(yield* stored("key")).toEqual(Option.some(encodePasskey(advanced)))

          // The swap was decided on 5: a second assertion decided on 5 loses.
          expect(yield* passkeys.advanceSignCount(key.id, 5, 7, at(3_003))).toBe(false)
          expect(yield* stored("key")).toEqual(Option.some(encodePasskey(advanced)))
          expect(yield* passkeys.advanceSignCount(PasskeyId.make(randomUUID()), 0, 1, at(0))).toBe(false)
        })
      )
    )

    it.effect("of 20 parallel advanceSignCount with one expected count, exactly one wins", () =>
      run(
        Effect.gen(function* () {
          const passkeys = yield* PasskeyRepo
          const alice = yield* createUser("alice@example.com")
          const key = passkey(alice, "key", at(0), { sign_count: 10 })
          yield* add(key)

          const results = yield* Effect.all(
            Array.from({ length: 20 }, (_, i) => passkeys.advanceSignCount(key.id, 10, 11 + i, at(1_000 + i))),
            { concurrency: "unbounded" }
          )
          expect(results.filter((won) => won)).toHaveLength(1)
          const winner = results.indexOf(true)
          const after = Option.getOrThrow(yield* passkeys.findByCredentialId(key.credential_id)).passkey
          expect(after.sign_count).toBe(11 + winner)
          expect(after.last_used_at).toEqual(Option.some(at(1_000 + winner)))
        })
      )
    )

    it.effect("touch records the last use of a passkey without a counter, and nothing else", () =>
      run(
        Effect.gen(function* () {
          const passkeys = yield* PasskeyRepo
          const alice = yield* createUser("alice@example.com")
          const synced = passkey(alice, "synced", at(0), { backed_up: true })
          yield* add(synced)

          yield* passkeys.touch(synced.id, at(60_000 + 42))
          const touched = new Passkey({ ...synced, last_used_at: Option.some(at(60_000 + 42)) })
          expect(yield* stored("synced")).toEqual(Option.some(encodePasskey(touched)))
          yield* passkeys.touch(PasskeyId.make(randomUUID()), at(1))
          expect(yield* passkeys.countOf(alice.id)).toBe(1)
        })
      )
    )

    it.effect("deleting a user deletes its passkeys, frees their credential ids and keeps the others'", () =>
      run(
        Effect.gen(function* () {
          const users = yield* UserRepo
          const passkeys = yield* PasskeyRepo
          const alice = yield* createUser("alice@example.com")
          const bob = yield* createUser("bob@example.com")
          yield* add(passkey(alice, "phone", at(0)))
          yield* add(passkey(alice, "key", at(1)))
          const bobs = passkey(bob, "bobs", at(0))
          yield* add(bobs)

          yield* users.delete(alice.id)
          expect(yield* stored("phone")).toEqual(Option.none())
          expect(yield* passkeys.listOf(alice.id)).toEqual([])
          expect(yield* passkeys.countOf(alice.id)).toBe(0)
          expect(yield* passkeys.credentialsOf(alice.id)).toEqual([])
          expect(yield* stored("bobs")).toEqual(Option.some(encodePasskey(bobs)))

          yield* add(passkey(bob, "phone", at(2)))
          expect(yield* passkeys.countOf(bob.id)).toBe(2)
        })
      )
    )
  })
}
