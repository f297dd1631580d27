import { DateTime, Effect, Layer, Option } from "effect"
import { AddressChanges } from "../../application/ports/AddressChanges.js"
import { type AddressChangeUndo, linkOf, type PendingAddressChange, undoIsLive } from "../../domain/AddressChange.js"
import type { UserId } from "../../domain/User.js"

/**
 * Address changes in Maps, for tests and throwaway runs: pending changes by user, undos by their
 * token's digest. Each operation runs without yielding, so each is atomic.
 */
export const make = Effect.sync(() => {
  const pendingByUser = new Map<UserId, PendingAddressChange>()
  const undos = new Map<string, AddressChangeUndo>()

  const pendingOf = (tokenDigest: string) => {
    for (const pending of pendingByUser.values()) {
      const link = linkOf(pending, tokenDigest)
      if (link !== null) return Option.some({ pending, link })
    }
    return Option.none()
  }

  const expiredBefore = (before: DateTime.Utc) => (entry: { readonly expires_at: DateTime.Utc }) =>
    DateTime.lessThan(entry.expires_at, before)

  return AddressChanges.of({
    replace: (pending) => Effect.sync(() => void pendingByUser.set(pending.user_id, pending)),
    findByToken: (tokenDigest) => Effect.sync(() => pendingOf(tokenDigest)),
    markUsed: (tokenDigest) =>
      Effect.sync(() =>
        Option.map(pendingOf(tokenDigest), ({ pending, link }) => {
          const used = link === "new" ? { ...pending, new_confirmed: true } : { ...pending, current_confirmed: true }
          pendingByUser.set(pending.user_id, used)
          return used
        })
      ),
    take: (userId, newTokenDigest) =>
      Effect.sync(() => {
        const pending = pendingByUser.get(userId)
        if (pending === undefined || pending.new_token_digest !== newTokenDigest) return false
        pendingByUser.delete(userId)
        return true
      }),
    remove: (userId) => Effect.sync(() => void pendingByUser.delete(userId)),
    reservedFor: (email, now) =>
      Effect.sync(() => {
        for (const undo of undos.values()) {
          if (undo.old_email === email && undoIsLive(undo, now)) return Option.some(undo.user_id)
        }
        return Option.none()
      }),
    putUndo: (undo) => Effect.sync(() => void undos.set(undo.token_digest, undo)),
    findUndo: (tokenDigest) => Effect.sync(() => Option.fromNullable(undos.get(tokenDigest))),
    takeUndos: (userId, tokenDigest) =>
      Effect.sync(() => {
        const found = undos.get(tokenDigest)?.user_id === userId
        for (const [digest, undo] of undos) if (undo.user_id === userId) undos.delete(digest)
        return found
      }),
    countExpired: (before) =>
      Effect.sync(
        () =>
          [...pendingByUser.values()].filter(expiredBefore(before)).length +
          [...undos.values()].filter(expiredBefore(before)).length
      ),
    deleteExpired: (before, limit) =>
      Effect.sync(() => {
        let deleted = 0
        const expired = expiredBefore(before)
        for (const [userId, pending] of pendingByUser) {
          if (deleted >= limit) return deleted
          if (expired(pending)) {
            pendingByUser.delete(userId)
            deleted++
          }
        }
        for (const [digest, undo] of undos) {
          if (deleted >= limit) return deleted
          if (expired(undo)) {
            undos.delete(digest)
            deleted++
          }
        }
        return deleted
      })
  })
})

export const layer = Layer.effect(AddressChanges, make)
