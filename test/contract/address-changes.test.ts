import { describe, expect, it } from "@effect/vitest"
import { DateTime, Effect, Option } from "effect"
import { AddressChanges } from "../../application/ports/AddressChanges.js"
import { UserRepo } from "../../application/ports/UserRepo.js"
import type { AddressChangeUndo, PendingAddressChange } from "../../domain/AddressChange.js"
import type { Email, UserId } from "../../domain/User.js"
import { databases } from "../support/databases.js"

/**
 * Address changes on every store (domain/AddressChange.ts): one pending change a user, found by
 * either link, each link counted atomically (of two used at once, the later sees both); undos
 * taken once, all of a user's at a time; an undo's old address reserved from everyone but its
 * account while it lasts; the expired ones swept.
 */

const NOW = Date.UTC(2033, 2, 3, 4, 5, 6, 789)
const MINUTE = 60_000
const DAY = 24 * 60 * MINUTE
const at = (offset: number) => DateTime.unsafeMake(NOW + offset)

const newUser = (email: string) =>
  Effect.flatMap(UserRepo, (users) =>
    users.create({
      email: email as Email,
      hashed_password: Option.none(),
      is_active: true,
      is_verified: true,
      is_superuser: false
    })
  )

const pendingOf = (
  userId: UserId,
  label: string,
  changes: Partial<PendingAddressChange> = {}
): PendingAddressChange => ({
  user_id: userId,
  new_email: `${label}-new@example.com`,
  family_id: `family-${label}`,
  credential_version: 2,
  new_token_digest: `new-${label}`,
  current_token_digest: `current-${label}`,
  new_confirmed: false,
  current_confirmed: false,
  created_at: at(0),
  expires_at: at(60 * MINUTE),
  ...changes
})

const undoOf = (userId: UserId, label: string, changes: Partial<AddressChangeUndo> = {}): AddressChangeUndo => ({
  token_digest: `undo-${label}`,
  user_id: userId,
  old_email: `${label}-old@example.com`,
  new_email: `${label}-new@example.com`,
  changed_at: at(0),
  expires_at: at(7 * DAY),
  ...changes
})

for (const backend of databases) {
  const run = <A, E>(effect: Effect.Effect<A, E, AddressChanges | UserRepo>) =>
    effect.pipe(Effect.provide(backend.repositories()))

  describe.skipIf(backend.skip)(`address changes (${backend.name})`, () => {
    it.effect("a pending change is found by either link, as stored; a newer one voids it", () =>
      run(
        Effect.gen(function* () {
          const changes = yield* AddressChanges
          const user = yield* newUser("ann@example.com")
          const stored = pendingOf(user.id, "ann")
          yield* changes.replace(stored)
          const byNew = yield* changes.findByToken(stored.new_token_digest)
          expect(Option.map(byNew, ({ pending, link }) => ({ pending: { ...pending }, link }))).toEqual(
            Option.some({ pending: stored, link: "new" })
          )
          expect(Option.map(yield* changes.findByToken("current-ann"), ({ link }) => link)).toEqual(
            Option.some("current")
          )
          const newer = pendingOf(user.id, "ann-2", { current_token_digest: null })
          yield* changes.replace(newer)
          expect(yield* changes.findByToken(stored.new_token_digest)).toEqual(Option.none())
          expect(yield* changes.findByToken(stored.current_token_digest ?? "")).toEqual(Option.none())
          expect(
            Option.map(yield* changes.findByToken(newer.new_token_digest), ({ pending }) => ({ ...pending }))
          ).toEqual(Option.some(newer))
        })
      )
    )

    it.effect("a link is counted on its own side; of both used at once, one sees both", () =>
      run(
        Effect.gen(function* () {
          const changes = yield* AddressChanges
          const user = yield* newUser("bea@example.com")
          yield* changes.replace(pendingOf(user.id, "bea"))
          const first = yield* changes.markUsed("new-bea")
          expect(
            Option.map(first, ({ new_confirmed, current_confirmed }) => [new_confirmed, current_confirmed])
          ).toEqual(Option.some([true, false]))
          expect(yield* changes.markUsed("unknown")).toEqual(Option.none())

          const other = yield* newUser("cid@example.com")
          yield* changes.replace(pendingOf(other.id, "cid"))
          const both = yield* Effect.all([changes.markUsed("new-cid"), changes.markUsed("current-cid")], {
            concurrency: "unbounded"
          })
          const sawBoth = both.filter((used) =>
            Option.exists(used, (row) => row.new_confirmed && row.current_confirmed)
          )
          expect(sawBoth.length).toBeGreaterThanOrEqual(1)
        })
      )
    )

    it.effect("a change is taken once, and only by its new link's digest", () =>
      run(
        Effect.gen(function* () {
          const changes = yield* AddressChanges
          const user = yield* newUser("dee@example.com")
          yield* changes.replace(pendingOf(user.id, "dee"))
          expect(yield* changes.take(user.id, "current-dee")).toBe(false)
          const taken = yield* Effect.all([changes.take(user.id, "new-dee"), changes.take(user.id, "new-dee")], {
            concurrency: "unbounded"
          })
          expect(taken.filter(Boolean)).toHaveLength(1)
          expect(yield* changes.findByToken("new-dee")).toEqual(Option.none())
          yield* changes.replace(pendingOf(user.id, "dee-2"))
          yield* changes.remove(user.id)
          expect(yield* changes.findByToken("new-dee-2")).toEqual(Option.none())
        })
      )
    )

    it.effect("a live undo reserves its old address for its account alone, and is taken once with the others", () =>
      run(
        Effect.gen(function* () {
          const changes = yield* AddressChanges
          const users = yield* UserRepo
          const owner = yield* newUser("eve-new@example.com")
          const other = yield* newUser("fay@example.com")
          yield* changes.putUndo(undoOf(owner.id, "eve"))
          yield* changes.putUndo(undoOf(owner.id, "eve-2", { old_email: "eve-older@example.com" }))
          yield* changes.putUndo(undoOf(owner.id, "gone", { old_email: "gone@example.com", expires_at: at(-1) }))
          expect(yield* changes.reservedFor("eve-old@example.com", at(7 * DAY - 1))).toEqual(Option.some(owner.id))
          expect(yield* changes.reservedFor("eve-old@example.com", at(7 * DAY))).toEqual(Option.none())
          expect(yield* changes.reservedFor("gone@example.com", at(0))).toEqual(Option.none())
          // The users' store reads the reservation against its own (real) clock.
          const realNow = yield* DateTime.now
          const live = {
            ...undoOf(owner.id, "live"),
            old_email: "live-old@example.com",
            expires_at: DateTime.addDuration(realNow, "7 days")
          }
          yield* changes.putUndo(live)
          expect(yield* changes.reservedFor("live-old@example.com", realNow)).toEqual(Option.some(owner.id))
          expect(yield* Effect.flip(newUser("live-old@example.com"))).toMatchObject({ _tag: "UserAlreadyExistsError" })
          expect(yield* Effect.flip(users.setEmail(other.id, "live-old@example.com" as Email))).toMatchObject({
            _tag: "UserAlreadyExistsError"
          })
          expect(Option.map(yield* users.findById(other.id), (user) => user.email)).toEqual(
            Option.some("fay@example.com")
          )
          // Its own account may take it back.
          const back = yield* users.setEmail(owner.id, "live-old@example.com" as Email)
          expect(Option.map(back, (user) => user.email)).toEqual(Option.some("live-old@example.com"))

          expect(Option.map(yield* changes.findUndo("undo-eve"), (undo) => ({ ...undo }))).toEqual(
            Option.some(undoOf(owner.id, "eve"))
          )
          const taken = yield* Effect.all(
            [changes.takeUndos(owner.id, "undo-eve"), changes.takeUndos(owner.id, "undo-eve")],
            {
              concurrency: "unbounded"
            }
          )
          expect(taken.filter(Boolean)).toHaveLength(1)
          expect(yield* changes.findUndo("undo-eve-2")).toEqual(Option.none())
          expect(yield* changes.reservedFor("live-old@example.com", realNow)).toEqual(Option.none())
        })
      )
    )

    it.effect("the sweep deletes the changes and undos that expired, and nothing else", () =>
      run(
        Effect.gen(function* () {
          const changes = yield* AddressChanges
          const user = yield* newUser("gil@example.com")
          const other = yield* newUser("hal@example.com")
          yield* changes.replace(pendingOf(user.id, "gil", { expires_at: at(MINUTE) }))
          yield* changes.replace(pendingOf(other.id, "hal", { expires_at: at(60 * MINUTE) }))
          yield* changes.putUndo(undoOf(user.id, "gil", { expires_at: at(2 * MINUTE) }))
          yield* changes.putUndo(undoOf(user.id, "gil-2", { expires_at: at(DAY) }))
          expect(yield* changes.countExpired(at(5 * MINUTE))).toBe(2)
          expect(yield* changes.deleteExpired(at(5 * MINUTE), 1)).toBe(1)
          expect(yield* changes.deleteExpired(at(5 * MINUTE), 10)).toBe(1)
          expect(yield* changes.deleteExpired(at(5 * MINUTE), 10)).toBe(0)
          expect(Option.isSome(yield* changes.findByToken("new-hal"))).toBe(true)
          expect(Option.isSome(yield* changes.findUndo("undo-gil-2"))).toBe(true)
          expect(yield* changes.findByToken("new-gil")).toEqual(Option.none())
          expect(yield* changes.findUndo("undo-gil")).toEqual(Option.none())
        })
      )
    )
  })
}
