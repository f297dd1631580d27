import { DateTime, Effect, Layer, Option, Order } from "effect"
import { PasskeyRepo } from "../../application/ports/PasskeyRepo.js"
import { UserRepo } from "../../application/ports/UserRepo.js"
import { type CredentialId, Passkey, PasskeyCredentialTakenError, type PasskeyId } from "../../domain/Passkey.js"
import type { UserId } from "../../domain/User.js"

const oldestFirst: Order.Order<Passkey> = Order.combine(
  Order.mapInput(DateTime.Order, (passkey: Passkey) => passkey.created_at),
  Order.mapInput(Order.string, (passkey: Passkey) => passkey.id)
)

/**
 * Passkeys in a Map, for tests and throwaway runs. Each write runs without yielding, so the
 * credential id's uniqueness and the sign-count swap are atomic. A Map has no foreign key, so
 * the users' store is asked instead: the passkeys of a user it no longer holds are dropped when
 * next met, and are never answered.
 */
export const make = Effect.gen(function* () {
  const users = yield* UserRepo
  const byId = new Map<PasskeyId, Passkey>()

  const dropAllOf = (userId: UserId) =>
    Effect.sync(() => {
      for (const passkey of byId.values()) if (passkey.user_id === userId) byId.delete(passkey.id)
    })
  const withCredential = (credentialId: CredentialId) =>
    Option.fromNullable([...byId.values()].find((passkey) => passkey.credential_id === credentialId))
  /** The user, when the users' store still holds it; otherwise its passkeys are dropped. */
  const owner = (userId: UserId) =>
    Effect.tap(users.findById(userId), (user) => (Option.isNone(user) ? dropAllOf(userId) : Effect.void))
  /** The user's passkeys, oldest first; none for a user that is gone. */
  const passkeysOf = (userId: UserId) =>
    Effect.map(owner(userId), (user) =>
      Option.isNone(user) ? [] : [...byId.values()].filter((passkey) => passkey.user_id === userId).sort(oldestFirst)
    )
  const update = (id: PasskeyId, change: (passkey: Passkey) => Option.Option<Partial<Passkey>>) =>
    Effect.sync(() => {
      const passkey = byId.get(id)
      const changes = passkey === undefined ? Option.none() : change(passkey)
      if (passkey === undefined || Option.isNone(changes)) return false
      byId.set(id, new Passkey({ ...passkey, ...changes.value }))
      return true
    })

  return PasskeyRepo.of({
    add: (passkey) =>
      Effect.gen(function* () {
        // A credential of a deleted user is free again, as the cascade frees it in SQL.
        const holder = withCredential(passkey.credential_id)
        if (Option.isSome(holder)) yield* owner(holder.value.user_id)
        return yield* Effect.suspend(() => {
          if (Option.isSome(withCredential(passkey.credential_id))) return new PasskeyCredentialTakenError()
          byId.set(passkey.id, passkey)
          return Effect.void
        })
      }),
    findByCredentialId: (credentialId) =>
      Option.match(withCredential(credentialId), {
        onNone: () => Effect.succeedNone,
        onSome: (passkey) =>
          Effect.map(
            owner(passkey.user_id),
            Option.map((user) => ({ passkey, user }))
          )
      }),
    listOf: passkeysOf,
    countOf: (userId) => Effect.map(passkeysOf(userId), (passkeys) => passkeys.length),
    credentialsOf: (userId) =>
      Effect.map(passkeysOf(userId), (passkeys) =>
        passkeys.map(({ credential_id, transports }) => ({ credential_id, transports }))
      ),
    deleteOfUser: (userId, id) => Effect.sync(() => byId.get(id)?.user_id === userId && byId.delete(id)),
    advanceSignCount: (id, expected, reported, usedAt) =>
      update(id, (passkey) =>
        passkey.sign_count === expected
          ? Option.some({ sign_count: reported, last_used_at: Option.some(usedAt) })
          : Option.none()
      ),
    touch: (id, usedAt) => Effect.asVoid(update(id, () => Option.some({ last_used_at: Option.some(usedAt) })))
  })
})

export const layer = Layer.effect(PasskeyRepo, make)
