import { DateTime, Effect, Option } from "effect"
import { RefreshTokenRepo } from "../../application/ports/RefreshTokenRepo.js"
import { Transaction } from "../../application/ports/Transaction.js"
import { FamilyId, StoredRefreshToken, TokenFamily } from "../../domain/Session.js"
import { UserId } from "../../domain/User.js"
import type { Session } from "./flows.js"

export const MINUTE = 60_000

/**
 * `count` sessions of the signed-in user stored as a sign-in would store them (in one transaction:
 * a commit each would take a sync of the disk each), each last used a minute before the one after
 * it (the first the oldest); their ids answered newest first.
 */
export const seedSessions = (owner: Session, count: number, label = "seeded") =>
  Effect.flatMap(Transaction, (tx) => tx.transaction(seedInOne(owner, count, label)))

const seedInOne = (owner: Session, count: number, label: string) =>
  Effect.gen(function* () {
    const repo = yield* RefreshTokenRepo
    const start = Date.now() - (count + 10) * MINUTE
    const ids: Array<string> = []
    for (let i = 0; i < count; i++) {
      const usedAt = DateTime.unsafeMake(start + i * MINUTE)
      const expiresAt = DateTime.unsafeMake(Date.now() + 30 * 24 * 60 * MINUTE)
      const familyId = FamilyId.make(`${label}-${owner.userId}-${String(i).padStart(5, "0")}`)
      yield* repo.startFamily(
        new TokenFamily({
          family_id: familyId,
          user_id: UserId.make(owner.userId),
          ip_address: "192.0.2.1",
          user_agent: `${label} ${i}`,
          created_at: usedAt,
          last_used_at: usedAt,
          expires_at: expiresAt,
          revoked_at: Option.none()
        }),
        new StoredRefreshToken({
          digest: `digest-${familyId}`,
          family_id: familyId,
          issued_at: usedAt,
          expires_at: expiresAt,
          rotated_at: Option.none(),
          sealed_successor: Option.none()
        })
      )
      ids.push(familyId)
    }
    return ids.reverse()
  })
