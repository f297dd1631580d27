import { DateTime, Duration, Effect, Option } from "effect"
import { Actor, type AuditDetails } from "../domain/Audit.js"
import { AuthEvent } from "../domain/Events.js"
import { CredentialsChangedError, SessionNotFoundError, TokenBlacklistedError, TokenError } from "../domain/errors.js"
import { nextBatchSize } from "../domain/Retention.js"
import { type ClientInfo, FamilyId, type SessionPosition, sessionPage, TokenFamily } from "../domain/Session.js"
import type { TokenPayload } from "../domain/Token.js"
import { toPublicUser, type User, UserId } from "../domain/User.js"
import { validated } from "../domain/validated.js"
import { Audit } from "./Audit.js"
import { AuthPolicy } from "./AuthPolicy.js"
import { letRequestsIn, untilNoneLeft } from "./batches.js"
import { Cryptography } from "./ports/Cryptography.js"
import { Events } from "./ports/Events.js"
import { RefreshTokenRepo } from "./ports/RefreshTokenRepo.js"
import { TokenHolders } from "./ports/TokenHolders.js"
import { TokenSigner } from "./ports/TokenSigner.js"
import { Transaction } from "./ports/Transaction.js"
import { UserRepo } from "./ports/UserRepo.js"
import { pairIssuer } from "./SessionTokens.js"
import { Webhooks } from "./Webhooks.js"

/** Who an access token speaks for, and the token itself. */
export interface Principal {
  readonly user: User
  readonly claims: TokenPayload
}

/** The session (family) an access token belongs to, if it names one. */
export const currentFamily = (principal: Principal): Option.Option<FamilyId> =>
  Option.map(Option.fromNullable(principal.claims.family_id), FamilyId.make)

/** Sessions ended by one statement of a bulk ending, at most: fewer while statements overrun their budget. */
const SESSIONS_BATCH = 500

/** Which page of their sessions a caller asks for. */
export interface SessionPageRequest {
  readonly limit: number
  readonly after: Option.Option<SessionPosition>
}

/**
 * Sessions, in the spec's sense: a session is one refresh-token family, the refresh tokens
 * rotated from one sign-in and the access tokens issued with them. Every way a session ends
 * (logout, DELETE /sessions, reuse, a password change or reset, deletion, deactivation) is
 * recorded in the database, and every access token is checked against that record: no cache
 * stands between them, so no cache lost, flushed or written by another process can revive an
 * ended session. The refresh that rotates a session's tokens is Refresh's.
 */
export class Sessions extends Effect.Service<Sessions>()("app/Sessions", {
  effect: Effect.gen(function* () {
    const signer = yield* TokenSigner
    const families = yield* RefreshTokenRepo
    const users = yield* UserRepo
    const holders = yield* TokenHolders
    const crypto = yield* Cryptography
    const events = yield* Events
    const webhooks = yield* Webhooks
    const audit = yield* Audit
    const tx = yield* Transaction
    const { tokens: rules } = yield* AuthPolicy
    const issuePair = yield* pairIssuer

    /** A sign-in refused because the user's ways in changed while it checked the credential. */
    const staleSignIn = (user: User, signIn: AuditDetails) =>
      Effect.logInfo("sign-in refused: the account's ways in changed while it was checked").pipe(
        Effect.annotateLogs({ user_id: user.id }),
        Effect.zipRight(
          audit.record({
            type: "sign_in.failed",
            user_id: user.id,
            details: { method: String(signIn.method ?? "unknown"), reason: "credentials_changed" }
          })
        ),
        Effect.zipRight(Effect.fail(new CredentialsChangedError()))
      )

    /**
     * Starts a session: a new family, its first refresh token and an access token, for `user` as
     * read before its credential was checked. The family and the sign-in's audit entry (how the
     * user signed in: `signIn`) commit together, and only if the user's credential version is still
     * the one read (domain/WaysIn.ts): a sign-in whose check began before a password change, a
     * reset or a takeover fails with CredentialsChangedError rather than outlive it.
     */
    const start = Effect.fn("Sessions.start")(function* (
      user: User,
      client: ClientInfo,
      signIn: AuditDetails = {},
      event?: AuthEvent
    ) {
      const now = yield* DateTime.now
      const familyId = FamilyId.make(yield* crypto.randomId)
      const { pair, stored } = yield* issuePair(user, familyId, now, now)
      const family = new TokenFamily(
        {
          family_id: familyId,
          user_id: user.id,
          ip_address: client.ip_address,
          user_agent: client.user_agent,
          created_at: now,
          last_used_at: now,
          expires_at: stored.expires_at,
          revoked_at: Option.none()
        },
        validated
      )
      const started = yield* tx.transaction(
        Effect.gen(function* () {
          if (!(yield* users.holdCredentials(user.id, user.credential_version))) return false
          yield* families.startFamily(family, stored)
          yield* audit.append({
            type: "sign_in.succeeded",
            user_id: user.id,
            actor: Actor.user(user.id),
            details: { ...signIn, family_id: familyId }
          })
          for (const evicted of yield* families.endLeastRecentlyUsed(user.id, now, rules.maxSessionsPerUser)) {
            yield* audit.append({ type: "session.evicted", user_id: user.id, details: { family_id: evicted } })
          }
          // The sign-in's event (after_login, after_oauth_login) leaves by webhook only if it committed.
          if (event !== undefined) yield* webhooks.publishEvent(event)
          return true
        })
      )
      if (!started) return yield* staleSignIn(user, signIn)
      return pair
    })

    /**
     * The user and claims an access token speaks for, or why it is refused: an unknown or
     * inactive user, then an ended session. The user and the session's state are one read of the
     * store (TokenHolders), which every authenticated request makes; a token of no session, or
     * BLACKLIST_ENABLED=false, reads the user alone.
     */
    const authenticate = Effect.fnUntraced(function* (accessToken: string) {
      if (accessToken === "") return yield* new TokenError({ message: "A bearer token is required." })
      const claims = yield* signer.verify(accessToken, "access")
      const userId = UserId.make(claims.sub)
      const holder =
        rules.blacklistEnabled && claims.family_id !== null
          ? yield* holders.find(userId, FamilyId.make(claims.family_id))
          : Option.map(yield* users.findById(userId), (user) => ({ user, sessionEnded: false }))
      if (Option.isNone(holder) || !holder.value.user.is_active) {
        return yield* new TokenError({ message: "The account is no longer active." })
      }
      if (holder.value.sessionEnded) return yield* new TokenBlacklistedError({ message: "The token has been revoked." })
      return { user: holder.value.user, claims } satisfies Principal
    })

    /** Sign-out: ends the session of the request's access token, the token itself with it. */
    const logout = Effect.fn("Sessions.logout")(function* (principal: Principal) {
      const family = currentFamily(principal)
      const loggedOut = AuthEvent.after_logout({ user: toPublicUser(principal.user) })
      const revoke = Option.isSome(family)
        ? Effect.asVoid(families.revokeFamily(family.value, yield* DateTime.now))
        : Effect.void
      yield* webhooks.committedWith("after_logout", revoke, () => loggedOut)
      yield* audit.record({
        type: "session.logged_out",
        user_id: principal.user.id,
        actor: Actor.user(principal.user.id),
        details: { family_id: Option.getOrNull(family) }
      })
      yield* events.emit(loggedOut)
    })

    /**
     * Ends every session of a user but `except`, in batches with a pause between them (docs/operating.md,
     * "Data over time"); answers how many families it ended, and how many of those were live.
     */
    const endAll = Effect.fn("Sessions.endAll")(function* (userId: UserId, except: Option.Option<FamilyId>) {
      const now = yield* DateTime.now
      let ended = 0
      let live = 0
      let size = SESSIONS_BATCH
      for (;;) {
        const [elapsed, batch] = yield* Effect.timed(families.endFamiliesOfUser(userId, now, except, size))
        ended += batch.ended
        live += batch.live
        if (batch.done) return { ended, live }
        size = nextBatchSize(size, Duration.toMillis(elapsed), SESSIONS_BATCH)
        yield* letRequestsIn
      }
    })

    /**
     * Deletes the records of every session of a user whose sessions have ended, for the user's
     * deletion: their refresh tokens, then the sessions, in batches.
     */
    const forget = Effect.fn("Sessions.forget")(function* (userId: UserId) {
      yield* untilNoneLeft((size) => families.deleteOfUser(userId, "tokens", size), SESSIONS_BATCH)
      yield* untilNoneLeft((size) => families.deleteOfUser(userId, "sessions", size), SESSIONS_BATCH)
    })

    /**
     * A page of the caller's live sessions: on the first page their own first, then the others,
     * most recently used first; and where the next page starts, if there is one.
     */
    const list = Effect.fn("Sessions.list")(function* (principal: Principal, page: SessionPageRequest) {
      const now = yield* DateTime.now
      const current = currentFamily(principal)
      const own =
        Option.isNone(page.after) && Option.isSome(current)
          ? yield* families.liveFamily(principal.user.id, current.value, now)
          : Option.none()
      const room = page.limit - (Option.isSome(own) ? 1 : 0)
      // One more than fits, to know whether a next page exists.
      const others = yield* families.liveFamiliesOf(principal.user.id, now, {
        limit: room + 1,
        after: page.after,
        except: current
      })
      return sessionPage(own, others, page.limit, current)
    })

    /**
     * Ends one of the caller's sessions. Unknown, ended, expired and other users' sessions all
     * answer the same SessionNotFoundError. Ending one's own current session is a sign-out: the
     * family's revocation covers the presented access token as well.
     */
    const end = Effect.fn("Sessions.end")(function* (principal: Principal, familyId: FamilyId) {
      const ended = yield* families.revokeFamilyOfUser(principal.user.id, familyId, yield* DateTime.now)
      if (!ended) return yield* new SessionNotFoundError()
      yield* audit.record({
        type: "session.revoked",
        user_id: principal.user.id,
        actor: Actor.user(principal.user.id),
        details: { family_id: familyId }
      })
    })

    /**
     * Ends every session of the caller but the current one, and answers how many live sessions
     * it ended. Families that had already expired are marked ended too (that costs nothing and
     * covers any access token still alive) but are not counted: the caller never saw them as
     * sessions.
     */
    const endOthers = Effect.fn("Sessions.endOthers")(function* (principal: Principal) {
      const revoked = (yield* endAll(principal.user.id, currentFamily(principal))).live
      yield* audit.record({
        type: "sessions.revoked_others",
        user_id: principal.user.id,
        actor: Actor.user(principal.user.id),
        details: { revoked }
      })
      return revoked
    })

    return { start, authenticate, logout, end, endOthers, endAll, forget, list } as const
  })
}) {}
