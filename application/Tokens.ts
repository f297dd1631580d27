import { DateTime, Duration, Effect, Option, Schema } from "effect"
import { TokenBlacklistedError, TokenError, TokenExpiredError } from "../domain/errors.js"
import { decideRefresh, FamilyId, StoredRefreshToken, TokenFamily } from "../domain/Session.js"
import { TokenPair, type TokenPayload, tokenWindow } from "../domain/Token.js"
import { toPublicUser, type User, UserId } from "../domain/User.js"
import { AuthPolicy } from "./AuthPolicy.js"
import { Blacklist } from "./ports/Blacklist.js"
import { Cryptography } from "./ports/Cryptography.js"
import { RefreshTokenRepo } from "./ports/RefreshTokenRepo.js"
import type { StoreUnavailableError } from "./ports/StoreUnavailableError.js"
import { TokenSigner } from "./ports/TokenSigner.js"
import { UserRepo } from "./ports/UserRepo.js"

/** Where a session was opened from, as far as the request tells. */
export interface ClientInfo {
  readonly ip_address: string | null
  readonly user_agent: string | null
}

/** Who an access token speaks for, and the token itself. */
export interface Principal {
  readonly user: User
  readonly claims: TokenPayload
}

const decodeSealedPair = Schema.decodeUnknownOption(Schema.parseJson(TokenPair))

/**
 * Issuing, verifying and revoking the tokens of a session. A session is a family: the refresh
 * tokens rotated from one sign-in, and the access tokens issued with them.
 */
export class Tokens extends Effect.Service<Tokens>()("app/Tokens", {
  effect: Effect.gen(function* () {
    const signer = yield* TokenSigner
    const families = yield* RefreshTokenRepo
    const blacklist = yield* Blacklist
    const users = yield* UserRepo
    const crypto = yield* Cryptography
    const policy = yield* AuthPolicy

    /** Revocations must outlive every access token they cover, leeway included. */
    const revocationLifetime = Duration.sum(policy.accessTokenTtl, policy.tokenLeeway)
    const expiresIn = Math.floor(Duration.toSeconds(policy.accessTokenTtl))

    const issuePair = Effect.fnUntraced(function* (user: User, familyId: FamilyId, now: DateTime.Utc) {
      const refresh = yield* signer.sign({
        sub: user.id,
        type: "refresh",
        jti: yield* crypto.randomId,
        ...tokenWindow(now, policy.refreshTokenTtl),
        family_id: familyId
      })
      const access = yield* signer.sign({
        sub: user.id,
        type: "access",
        jti: yield* crypto.randomId,
        ...tokenWindow(now, policy.accessTokenTtl),
        roles: user.roles,
        extra: Option.isSome(policy.customClaims) ? yield* policy.customClaims.value(toPublicUser(user)) : {},
        family_id: familyId
      })
      const pair: TokenPair = {
        access_token: access,
        refresh_token: refresh,
        token_type: "bearer",
        expires_in: expiresIn
      }
      const stored = new StoredRefreshToken({
        digest: crypto.digest(refresh),
        family_id: familyId,
        issued_at: now,
        expires_at: DateTime.addDuration(now, policy.refreshTokenTtl),
        rotated_at: Option.none(),
        sealed_successor: Option.none()
      })
      return { pair, stored }
    })

    /** Marks families revoked for access tokens; the refresh side is the repository's. */
    const blacklistFamilies = Effect.fnUntraced(function* (familyIds: ReadonlyArray<string>, now: DateTime.Utc) {
      if (!policy.blacklistEnabled) return
      const until = DateTime.addDuration(now, revocationLifetime)
      yield* Effect.forEach(familyIds, (familyId) => blacklist.revokeFamily(familyId, until), { discard: true })
    })

    /** Starts a session: a new family, its first refresh token and an access token. */
    const startSession = Effect.fn("Tokens.startSession")(function* (user: User, client: ClientInfo) {
      const now = yield* DateTime.now
      const familyId = FamilyId.make(yield* crypto.randomId)
      const { pair, stored } = yield* issuePair(user, familyId, now)
      const family = new TokenFamily({
        family_id: familyId,
        user_id: user.id,
        ip_address: client.ip_address,
        user_agent: client.user_agent,
        created_at: now,
        last_used_at: now,
        expires_at: stored.expires_at,
        revoked_at: Option.none()
      })
      yield* families.startFamily(family, stored)
      return pair
    })

    const endFamily = Effect.fnUntraced(function* (familyId: FamilyId, now: DateTime.Utc) {
      yield* families.revokeFamily(familyId, now)
      yield* blacklistFamilies([familyId], now)
    })

    const rotate = (
      digest: string,
      isRetry: boolean,
      client?: ClientInfo
    ): Effect.Effect<TokenPair, TokenError | TokenExpiredError | TokenBlacklistedError | StoreUnavailableError> =>
      Effect.gen(function* () {
        const now = yield* DateTime.now
        const decision = decideRefresh(yield* families.findByDigest(digest), now, policy.refreshReuseGrace)
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
            yield* endFamily(familyId, now)
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
            const user = yield* users.findById(family.user_id)
            if (Option.isNone(user) || !user.value.is_active) {
              return yield* new TokenError({ message: "The account is no longer active." })
            }
            const { pair, stored } = yield* issuePair(user.value, family.family_id, now)
            const sealedSuccessor = Duration.isZero(policy.refreshReuseGrace)
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
     * Exchanges a refresh token for a new pair, applying the refresh-family rule. The session
     * records the client it was refreshed from as its latest.
     */
    const refresh = Effect.fn("Tokens.refresh")(function* (presented: string, client?: ClientInfo) {
      yield* signer.verify(presented, "refresh")
      return yield* rotate(crypto.digest(presented), false, client)
    })

    /** The user and claims an access token speaks for, or why it is refused. */
    const authenticate = Effect.fnUntraced(function* (accessToken: string) {
      if (accessToken === "") return yield* new TokenError({ message: "A bearer token is required." })
      const claims = yield* signer.verify(accessToken, "access")
      if (policy.blacklistEnabled && (yield* blacklist.isRevoked(claims.jti, claims.family_id))) {
        return yield* new TokenBlacklistedError({ message: "The token has been revoked." })
      }
      const user = yield* users.findById(UserId.make(claims.sub))
      if (Option.isNone(user) || !user.value.is_active) {
        return yield* new TokenError({ message: "The account is no longer active." })
      }
      return { user: user.value, claims } satisfies Principal
    })

    /** Ends the session of an access token: the token itself and its whole family. */
    const endSessionOf = Effect.fn("Tokens.endSessionOf")(function* (principal: Principal) {
      const now = yield* DateTime.now
      if (policy.blacklistEnabled) {
        const until = DateTime.addDuration(DateTime.unsafeMake(principal.claims.exp * 1000), policy.tokenLeeway)
        yield* blacklist.revokeToken(principal.claims.jti, until)
      }
      if (principal.claims.family_id !== null) yield* endFamily(FamilyId.make(principal.claims.family_id), now)
    })

    /** Ends every session of a user but `except`. */
    const endSessionsOf = Effect.fn("Tokens.endSessionsOf")(function* (
      userId: UserId,
      except: Option.Option<FamilyId>
    ) {
      const now = yield* DateTime.now
      const ended = yield* families.revokeFamiliesOfUser(userId, now, except)
      yield* blacklistFamilies(ended, now)
      return ended
    })

    /**
     * Ends one session of a user, access tokens included, if it is theirs and live; answers
     * whether it did. Another user's session is never touched.
     */
    const endSessionOfUser = Effect.fn("Tokens.endSessionOfUser")(function* (userId: UserId, familyId: FamilyId) {
      const now = yield* DateTime.now
      const ended = yield* families.revokeFamilyOfUser(userId, familyId, now)
      if (ended) yield* blacklistFamilies([familyId], now)
      return ended
    })

    /**
     * Re-marks recently ended families after a restart, so that a blacklist kept in memory does
     * not forget a logout while the access tokens it covered are still unexpired.
     */
    const restoreRevocations = Effect.fn("Tokens.restoreRevocations")(function* () {
      if (!policy.blacklistEnabled) return 0
      const now = yield* DateTime.now
      const recent = yield* families.revokedSince(DateTime.subtractDuration(now, revocationLifetime))
      yield* Effect.forEach(
        recent,
        ({ family_id, revoked_at }) =>
          blacklist.revokeFamily(family_id, DateTime.addDuration(revoked_at, revocationLifetime)),
        { discard: true }
      )
      return recent.length
    })

    return {
      startSession,
      refresh,
      authenticate,
      endSessionOf,
      endSessionsOf,
      restoreRevocations,
      endSessionOfUser
    } as const
  })
}) {}
