import { Array as Arr, DateTime, Effect, Layer, Option } from "effect"
import { RefreshTokenRepo, type SessionPruneStep } from "../../application/ports/RefreshTokenRepo.js"
import { byRecentUse, type FamilyId, isAfter, isLive, StoredRefreshToken, TokenFamily } from "../../domain/Session.js"
import { validated } from "../../domain/validated.js"
import { keyedTake } from "./keyedBatch.js"

/** Families and digests in Maps. Each operation runs without yielding, so rotation is a true CAS. */
export const make = Effect.sync(() => {
  const families = new Map<FamilyId, TokenFamily>()
  const tokens = new Map<string, StoredRefreshToken>()

  const revoke = (family: TokenFamily, now: DateTime.Utc) => {
    if (Option.isSome(family.revoked_at)) return false
    families.set(family.family_id, new TokenFamily({ ...family, revoked_at: Option.some(now) }, validated))
    return true
  }

  const notEndedOf = (userId: string) =>
    [...families.values()].filter((family) => family.user_id === userId && Option.isNone(family.revoked_at))

  const endedBefore = (family: TokenFamily | undefined, before: DateTime.Utc) =>
    family !== undefined &&
    ((Option.isSome(family.revoked_at) && DateTime.lessThan(family.revoked_at.value, before)) ||
      DateTime.lessThan(family.expires_at, before))

  const isSession = (step: SessionPruneStep) => step === "revokedSessions" || step === "expiredSessions"

  /** The rows of a sweep's step whose purpose ended before `before`: each one's id and key. */
  const prunable = function* (step: SessionPruneStep, before: DateTime.Utc): Generator<[string, DateTime.Utc]> {
    const ended = (family: TokenFamily | undefined) =>
      family === undefined
        ? Option.none()
        : Option.filter(
            step === "revokedSessions" || step === "revokedSessionTokens"
              ? family.revoked_at
              : Option.some(family.expires_at),
            (time) => DateTime.lessThan(time, before)
          )
    if (isSession(step)) {
      for (const family of families.values()) {
        const key = ended(family)
        if (Option.isSome(key)) yield [family.family_id, key.value]
      }
      return
    }
    for (const token of tokens.values()) {
      const key =
        step === "expiredTokens"
          ? Option.filter(Option.some(token.expires_at), (time) => DateTime.lessThan(time, before))
          : step === "sealedSuccessors"
            ? Option.filter(
                token.rotated_at,
                (time) => Option.isSome(token.sealed_successor) && DateTime.lessThan(time, before)
              )
            : ended(families.get(token.family_id))
      if (Option.isSome(key)) yield [token.digest, key.value]
    }
  }

  /** Deletes (or, for sealed successors, clears) one row of a step; a session goes with its tokens. */
  const pruneOne = (step: SessionPruneStep, id: string) => {
    if (isSession(step)) {
      families.delete(id as FamilyId)
      for (const [digest, token] of tokens) if (token.family_id === id) tokens.delete(digest)
    } else if (step === "sealedSuccessors") {
      const token = tokens.get(id) as StoredRefreshToken
      tokens.set(id, new StoredRefreshToken({ ...token, sealed_successor: Option.none() }, validated))
    } else {
      tokens.delete(id)
    }
  }

  return RefreshTokenRepo.of({
    startFamily: (family, first) =>
      Effect.sync(() => {
        families.set(family.family_id, family)
        tokens.set(first.digest, first)
      }),
    findByDigest: (digest) =>
      Effect.sync(() => {
        const token = tokens.get(digest)
        const family = token && families.get(token.family_id)
        return token && family ? Option.some({ token, family }) : Option.none()
      }),
    rotate: ({ presented, successor, sealedSuccessor, now, client }) =>
      Effect.sync(() => {
        const token = tokens.get(presented)
        const family = token && families.get(token.family_id)
        if (!token || !family || Option.isSome(token.rotated_at) || Option.isSome(family.revoked_at)) return false
        tokens.set(
          presented,
          new StoredRefreshToken(
            { ...token, rotated_at: Option.some(now), sealed_successor: sealedSuccessor },
            validated
          )
        )
        tokens.set(successor.digest, successor)
        families.set(
          family.family_id,
          new TokenFamily(
            {
              ...family,
              last_used_at: now,
              expires_at: successor.expires_at,
              ip_address: client?.ip_address ?? family.ip_address,
              user_agent: client?.user_agent ?? family.user_agent
            },
            validated
          )
        )
        return true
      }),
    revokeFamily: (familyId, now) =>
      Effect.sync(() => {
        const family = families.get(familyId)
        return family !== undefined && revoke(family, now)
      }),
    endFamiliesOfUser: (userId, now, except, limit) =>
      Effect.sync(() => {
        const batch = notEndedOf(userId)
          .filter((family) => !Option.contains(except, family.family_id))
          .slice(0, limit)
        const live = batch.filter((family) => isLive(family, now)).length
        for (const family of batch) revoke(family, now)
        return { ended: batch.length, live, done: batch.length < limit }
      }),
    endLeastRecentlyUsed: (userId, now, keep) =>
      Effect.sync(() => {
        const beyond = Arr.sort(notEndedOf(userId), byRecentUse).slice(keep)
        for (const family of beyond) revoke(family, now)
        return beyond.filter((family) => DateTime.lessThan(now, family.expires_at)).map((family) => family.family_id)
      }),
    deleteOfUser: (userId, what, limit) =>
      Effect.sync(() => {
        const owned = new Set(
          [...families.values()].filter((family) => family.user_id === userId).map((family) => family.family_id)
        )
        if (what === "sessions") {
          const batch = [...owned].slice(0, limit)
          for (const familyId of batch) pruneOne("revokedSessions", familyId)
          return batch.length
        }
        const batch = [...tokens.values()].filter((token) => owned.has(token.family_id)).slice(0, limit)
        for (const token of batch) tokens.delete(token.digest)
        return batch.length
      }),
    isEnded: (familyId) =>
      Effect.sync(() => {
        const family = families.get(familyId)
        return family === undefined || Option.isSome(family.revoked_at)
      }),
    liveFamiliesOf: (userId, now, { limit, after, except }) =>
      Effect.sync(() =>
        Arr.sort(
          [...families.values()].filter(
            (family) =>
              family.user_id === userId &&
              isLive(family, now) &&
              !Option.contains(except, family.family_id) &&
              (Option.isNone(after) || isAfter(family, after.value))
          ),
          byRecentUse
        ).slice(0, limit)
      ),
    liveFamily: (userId, familyId, now) =>
      Effect.sync(() =>
        Option.filter(
          Option.fromNullable(families.get(familyId)),
          (family) => family.user_id === userId && isLive(family, now)
        )
      ),
    revokeFamilyOfUser: (userId, familyId, now) =>
      Effect.sync(() => {
        const family = families.get(familyId)
        return family !== undefined && family.user_id === userId && isLive(family, now) && revoke(family, now)
      }),
    prune: (step, before, limit, from) =>
      Effect.sync(() => {
        const candidates = [...prunable(step, before)].map(([id, key]) => [id, DateTime.toEpochMillis(key)] as const)
        const { taken, batch } = keyedTake(candidates, from, limit)
        for (const id of taken) pruneOne(step, id)
        return batch
      }),
    pending: (cutoffs) =>
      Effect.sync(() => {
        let refreshTokens = 0
        let sealedSuccessors = 0
        for (const token of tokens.values()) {
          const gone =
            DateTime.lessThan(token.expires_at, cutoffs.tokensExpiredBefore) ||
            endedBefore(families.get(token.family_id), cutoffs.sessionsEndedBefore)
          if (gone) refreshTokens++
          else if (
            Option.isSome(token.sealed_successor) &&
            Option.isSome(token.rotated_at) &&
            DateTime.lessThan(token.rotated_at.value, cutoffs.sealedRotatedBefore)
          )
            sealedSuccessors++
        }
        const sessions = [...families.values()].filter((family) => endedBefore(family, cutoffs.sessionsEndedBefore))
        return { refreshTokens, sessions: sessions.length, sealedSuccessors }
      })
  })
})

export const layer = Layer.effect(RefreshTokenRepo, make)
