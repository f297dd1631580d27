import { type DateTime, Effect, Layer, Option } from "effect"
import { RefreshTokenRepo } from "../../application/ports/RefreshTokenRepo.js"
import { type FamilyId, isLive, StoredRefreshToken, TokenFamily } from "../../domain/Session.js"
import { validated } from "../../domain/validated.js"

/** Families and digests in Maps. Each operation runs without yielding, so rotation is a true CAS. */
export const make = Effect.sync(() => {
  const families = new Map<FamilyId, TokenFamily>()
  const tokens = new Map<string, StoredRefreshToken>()

  const revoke = (family: TokenFamily, now: DateTime.Utc) => {
    if (Option.isSome(family.revoked_at)) return false
    families.set(family.family_id, new TokenFamily({ ...family, revoked_at: Option.some(now) }, validated))
    return true
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
    revokeFamiliesOfUser: (userId, now, except) =>
      Effect.sync(() =>
        [...families.values()]
          .filter((family) => family.user_id === userId && !Option.contains(except, family.family_id))
          .filter((family) => revoke(family, now))
          .map((family) => family.family_id)
      ),
    isEnded: (familyId) =>
      Effect.sync(() => {
        const family = families.get(familyId)
        return family === undefined || Option.isSome(family.revoked_at)
      }),
    liveFamiliesOf: (userId, now) =>
      Effect.sync(() => [...families.values()].filter((family) => family.user_id === userId && isLive(family, now))),
    revokeFamilyOfUser: (userId, familyId, now) =>
      Effect.sync(() => {
        const family = families.get(familyId)
        return family !== undefined && family.user_id === userId && isLive(family, now) && revoke(family, now)
      })
  })
})

export const layer = Layer.effect(RefreshTokenRepo, make)
