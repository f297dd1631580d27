import { DateTime, Duration, Effect, Metric, Option, Schema } from "effect"
import { TokenBlacklistedError, TokenError, TokenExpiredError } from "../domain/errors.js"
import { type ClientInfo, decideRefresh } from "../domain/Session.js"
import { TokenPair } from "../domain/Token.js"
import { Audit } from "./Audit.js"
import { AuthPolicy } from "./AuthPolicy.js"
import { refreshReuseDetections } from "./metrics.js"
import { Cryptography } from "./ports/Cryptography.js"
import { RefreshTokenRepo } from "./ports/RefreshTokenRepo.js"
import type { StoreUnavailableError } from "./ports/StoreUnavailableError.js"
import { TokenHolders } from "./ports/TokenHolders.js"
import { TokenSigner } from "./ports/TokenSigner.js"
import { pairIssuer } from "./SessionTokens.js"

const decodeSealedPair = Schema.decodeUnknownOption(Schema.parseJson(TokenPair))

/**
 * The refresh: a refresh token exchanged for a new pair under the refresh-family rule
 * (domain/Session.ts `decideRefresh`). A token rotated once is spent; presenting it again ends
 * its session, except within the reuse grace window, where it answers the very pair its rotation
 * issued (sealed beside it) so that a client whose answer was lost is not signed out.
 */
export class Refresh extends Effect.Service<Refresh>()("app/Refresh", {
  effect: Effect.gen(function* () {
    const signer = yield* TokenSigner
    const families = yield* RefreshTokenRepo
    const holders = yield* TokenHolders
    const crypto = yield* Cryptography
    const audit = yield* Audit
    const { tokens: rules } = yield* AuthPolicy
    const issuePair = yield* pairIssuer
    const reuseGrace = Duration.seconds(rules.refreshReuseGraceSeconds)

    const rotate = (
      digest: string,
      isRetry: boolean,
      client?: ClientInfo
    ): Effect.Effect<TokenPair, TokenError | TokenExpiredError | TokenBlacklistedError | StoreUnavailableError> =>
      Effect.gen(function* () {
        const now = yield* DateTime.now
        const presented = yield* holders.presented(digest)
        const decision = decideRefresh(presented, now, reuseGrace)
        switch (decision._tag) {
          case "Unknown":
            return yield* new TokenError({ message: "Unknown refresh token." })
          case "Revoked":
            return yield* new TokenBlacklistedError({ message: "The session has ended." })
          case "Expired":
            return yield* new TokenExpiredError()
          case "ReuseDetected": {
            const familyId = decision.family.family_id
            yield* Effect.logWarning("refresh token reuse detected; ending its session").pipe(
              Effect.annotateLogs({ family_id: familyId })
            )
            yield* Metric.increment(refreshReuseDetections)
            yield* families.revokeFamily(familyId, now)
            yield* audit.record({
              type: "refresh.reuse_detected",
              user_id: decision.family.user_id,
              details: { family_id: familyId }
            })
            return yield* new TokenBlacklistedError({ message: "Refresh token reuse detected; the session has ended." })
          }
          case "ReplaySuccessor":
            return yield* crypto.open(decision.sealedSuccessor).pipe(
              Option.flatMap(decodeSealedPair),
              Option.match({
                onNone: () => Effect.fail(new TokenError({ message: "Unknown refresh token." })),
                onSome: Effect.succeed
              })
            )
          case "Rotate": {
            const { family } = decision
            const user = Option.flatMap(presented, (found) => found.user)
            if (Option.isNone(user) || !user.value.is_active) {
              return yield* new TokenError({ message: "The account is no longer active." })
            }
            const { pair, stored } = yield* issuePair(user.value, family.family_id, now, family.created_at)
            const sealedSuccessor = Duration.isZero(reuseGrace)
              ? Option.none()
              : Option.some(yield* crypto.seal(JSON.stringify(pair)))
            const won = yield* families.rotate({ presented: digest, successor: stored, sealedSuccessor, now, client })
            if (won) return pair
            // Another request rotated or ended this token between our read and our write: the
            // next decision sees what it did (reuse, or its successor within the grace window).
            if (isRetry) return yield* new TokenError({ message: "Unknown refresh token." })
            return yield* rotate(digest, true, client)
          }
        }
      })

    /**
     * Exchanges a refresh token for a new pair. The session records the client it was refreshed
     * from as its latest.
     */
    const refresh = Effect.fn("Refresh.refresh")(function* (presented: string, client?: ClientInfo) {
      yield* signer.verify(presented, "refresh")
      return yield* rotate(crypto.digest(presented), false, client)
    })

    return { refresh } as const
  })
}) {}
