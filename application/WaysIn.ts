import { DateTime, Effect, Option } from "effect"
import { Actor, type AuditDetails, type AuditEventType } from "../domain/Audit.js"
import type { AuthEvent } from "../domain/Events.js"
import { CredentialsChangedError, LastSignInMethodError, ReauthenticationRequiredError } from "../domain/errors.js"
import { endsGrants } from "../domain/oidc/Grant.js"
import { PasskeyId } from "../domain/Passkey.js"
import type { FamilyId } from "../domain/Session.js"
import type { User, UserId } from "../domain/User.js"
import {
  type AddressProof,
  auditTypeOf,
  decideProofOfAddress,
  decideRecentSignIn,
  decideRemoval,
  type Eviction,
  type Removal,
  type SessionsEnded,
  sessionsEndedBy,
  sessionsEndedEntryOf,
  type UserWaysIn,
  WayInChange
} from "../domain/WaysIn.js"
import { Audit } from "./Audit.js"
import { AuthPolicy } from "./AuthPolicy.js"
import { OAuthAccountRepo } from "./ports/OAuthAccountRepo.js"
import { OidcGrants } from "./ports/OidcGrants.js"
import { PasskeyRepo } from "./ports/PasskeyRepo.js"
import type { StoreUnavailableError } from "./ports/StoreUnavailableError.js"
import { Transaction } from "./ports/Transaction.js"
import { UserRepo } from "./ports/UserRepo.js"
import { SecurityNotices } from "./SecurityNotices.js"
import { type Principal, Sessions } from "./Sessions.js"
import { Webhooks } from "./Webhooks.js"

/** How a change of a way in is made and recorded. */
export interface ChangeOptions<A = unknown> {
  /** Who made it, for the audit log; left out, the request's actor (an operator's CLI, a superuser). */
  readonly actor?: Actor
  readonly details?: AuditDetails
  /**
   * The credential version the request read: the change is made only if it is still the
   * stored one (else CredentialsChangedError). A change made on the strength of a session
   * (adding a way in, a new password) expects the version its request was authenticated with,
   * so that a session ended meanwhile (a takeover, a reset) cannot plant a way in after it.
   */
  readonly expectedVersion?: number
  /** The caller's session, kept when the change ends every other one. */
  readonly caller?: Option.Option<FamilyId>
  /**
   * The spec's event the change makes (after_password_change, …), or how to make it from what
   * the change's writes answered (the user as they are after it): its webhook messages commit with it.
   */
  readonly event?: AuthEvent | ((done: A) => AuthEvent)
  /** Where the owner's notice goes, when not to the address the account had before the change (an undo's restored one). */
  readonly noticeTo?: string
}

/**
 * The rules of a user's ways in (domain/WaysIn.ts), carried out for every feature that adds,
 * removes or proves one: the password's, the passkeys', the providers', the reset's. A change
 * moves the credential version, ends the sessions it ends and writes its audit entries in one
 * transaction, and the owner is told once it has committed.
 */
export class WaysIn extends Effect.Service<WaysIn>()("app/WaysIn", {
  effect: Effect.gen(function* () {
    const users = yield* UserRepo
    const passkeys = yield* PasskeyRepo
    const accounts = yield* OAuthAccountRepo
    const sessions = yield* Sessions
    const grants = yield* OidcGrants
    const tx = yield* Transaction
    const audit = yield* Audit
    const webhooks = yield* Webhooks
    const { announce, told } = yield* SecurityNotices
    const { accounts: rules } = yield* AuthPolicy

    /** The ways in the user holds, as stored now (inside a transaction: as it sees them). */
    const held = (userId: UserId): Effect.Effect<UserWaysIn, StoreUnavailableError> =>
      Effect.all({
        hasPassword: Effect.map(users.findById(userId), (user) =>
          Option.exists(user, (found) => Option.isSome(found.hashed_password))
        ),
        linkedProviders: Effect.map(accounts.listOf(userId), (linked) => linked.map((account) => account.provider)),
        passkeys: Effect.map(passkeys.listOf(userId), (owned) => owned.map((passkey) => passkey.id as string))
      })

    /** Refused unless the session's sign-in is recent enough to add a way in. */
    const requireRecentSignIn = (principal: Principal) =>
      Effect.flatMap(DateTime.now, (now) => {
        const decision = decideRecentSignIn(principal.claims.auth_time, now, rules.reauthMaxAgeSeconds)
        return decision._tag === "Recent"
          ? Effect.void
          : Effect.fail(new ReauthenticationRequiredError({ maxAgeSeconds: decision.maxAgeSeconds }))
      })

    const endSessions = (userId: UserId, ended: SessionsEnded, caller: Option.Option<FamilyId>) =>
      ended === "none"
        ? Effect.succeed({ ended: 0, live: 0 })
        : sessions.endAll(userId, ended === "all" ? Option.none() : caller)

    const actorOf = <A>(options: ChangeOptions<A>) => (options.actor === undefined ? {} : { actor: options.actor })

    /**
     * A change's steps, for a transaction that is open: the credential version first (so that a
     * racing sign-in either is seen by the sessions' ending below or sees the new version), the
     * change's own writes, the sessions it ends, its audit entries.
     */
    const apply = <A, E, R>(
      user: User,
      change: WayInChange,
      writes: Effect.Effect<A, E, R>,
      options: ChangeOptions<A>
    ) =>
      Effect.gen(function* () {
        if (!(yield* users.changeCredentials(user.id, options.expectedVersion))) {
          return yield* new CredentialsChangedError()
        }
        const done = yield* writes
        const ending = sessionsEndedBy(change)
        const ended = yield* endSessions(user.id, ending, options.caller ?? Option.none())
        // The apps the user let in lose their grants too when the account may have been another's.
        if (endsGrants(change)) yield* grants.revokeOfUser(user.id, yield* DateTime.now)
        const endedEntry = sessionsEndedEntryOf(change)
        const counted = ending !== "none" && endedEntry === null ? { sessions_ended: ended.ended } : {}
        yield* audit.append({
          type: auditTypeOf(change),
          user_id: user.id,
          ...actorOf(options),
          details: { ...options.details, ...counted }
        })
        if (endedEntry !== null) {
          yield* audit.append({
            type: endedEntry,
            user_id: user.id,
            ...actorOf(options),
            details: { revoked: ended.ended }
          })
        }
        // The events' webhook messages commit with the change; their handlers run after it.
        const event = typeof options.event === "function" ? options.event(done) : options.event
        if (event !== undefined) yield* webhooks.publishEvent(event)
        return { done, notice: yield* announce(options.noticeTo ?? user.email, change) }
      })

    /** Makes a change of the user's ways in (`writes` the change itself), then tells the owner. */
    const change = <A, E, R>(
      user: User,
      what: WayInChange,
      writes: Effect.Effect<A, E, R>,
      options: ChangeOptions<A> = {}
    ) =>
      Effect.flatMap(tx.transaction(apply(user, what, writes, options)), ({ done, notice }) =>
        Effect.as(told(notice), done)
      )

    /**
     * Removes one of the caller's ways in, unless it is not theirs or the last one: decided inside
     * the transaction, after the version moved, so that of two removals racing over the last two
     * ways the second sees the first's and is refused.
     */
    const remove = <E, R, N>(
      principal: Principal,
      removal: Removal,
      what: WayInChange,
      removeIt: Effect.Effect<boolean, E, R>,
      notFound: () => N,
      details: AuditDetails,
      event?: AuthEvent
    ) =>
      change(
        principal.user,
        what,
        Effect.gen(function* () {
          const decision = decideRemoval(yield* held(principal.user.id), removal)
          if (decision._tag === "NotFound") return yield* Effect.fail(notFound())
          if (decision._tag === "LastWayToSignIn") return yield* new LastSignInMethodError()
          if (!(yield* removeIt)) return yield* Effect.fail(notFound())
        }),
        { actor: Actor.user(principal.user.id), details, ...(event === undefined ? {} : { event }) }
      ).pipe(
        // Without an expected version, only an account deleted meanwhile fails to move it.
        Effect.catchTag("CredentialsChangedError", () => Effect.fail(notFound()))
      )

    /** Every way in of an unproven registrant removed, each recorded, then the account verified. */
    const evict = (userId: UserId, eviction: Eviction, proof: AddressProof) =>
      Effect.gen(function* () {
        const recorded = (type: AuditEventType, details: AuditDetails) =>
          audit.append({ type, user_id: userId, details: { ...details, proof } })
        if (eviction.password) {
          yield* users.clearPassword(userId)
          yield* recorded("takeover.password_cleared", {})
        }
        for (const id of eviction.passkeys) {
          yield* passkeys.deleteOfUser(userId, PasskeyId.make(id))
          yield* recorded("takeover.passkey_removed", { passkey_id: id })
        }
        for (const provider of eviction.providers) {
          yield* accounts.unlink(userId, provider)
          yield* recorded("takeover.provider_unlinked", { provider })
        }
        const ended = yield* sessions.endAll(userId, Option.none())
        yield* recorded("takeover.sessions_ended", { sessions_ended: ended.ended })
        yield* users.setFlags(userId, { is_verified: true })
      })

    /** A takeover inside its transaction: every way in of the unproven registrant removed, the owner's notice announced. */
    const evictAnnounced = (user: User, eviction: Eviction, proof: AddressProof) =>
      Effect.zipRight(
        evict(user.id, eviction, proof),
        announce(user.email, WayInChange.TakenOver({ removed: eviction }))
      )

    /**
     * A proof of the address reached `user` (an auto-link by a provider-verified email, a reset
     * from the mailed link). On an account that never proved its address, every way in it held
     * is removed with every session, and it becomes verified; then `attach` (the prover's own
     * way in, made with `apply`) runs, all in one transaction. On a verified account `attach`
     * runs alone. The owner is told what was removed and what was added, after the commit.
     */
    const proveAddress = <A, E, R>(
      user: User,
      proof: AddressProof,
      attach: WayInChange,
      writes: Effect.Effect<A, E, R>,
      options: ChangeOptions<A> = {}
    ) =>
      Effect.gen(function* () {
        const { done, notice, takeover } = yield* tx.transaction(
          Effect.gen(function* () {
            // The version moves first, so that no way in is added or sign-in started while the
            // ways in are read and removed.
            if (!(yield* users.changeCredentials(user.id))) return yield* new CredentialsChangedError()
            const decision = decideProofOfAddress(user, yield* held(user.id))
            const takeover = decision._tag === "Evict" ? yield* evictAnnounced(user, decision.eviction, proof) : null
            return { ...(yield* apply(user, attach, writes, options)), takeover }
          })
        )
        if (takeover !== null) {
          yield* Effect.logInfo("a proof of the address took over an account that had never proved it").pipe(
            Effect.annotateLogs({ user_id: user.id, proof })
          )
          yield* told(takeover)
        }
        yield* told(notice)
        return { done, takenOver: takeover !== null }
      })

    /**
     * A proof of the address that adds no way in (a mailed sign-in link or code). An account
     * that never proved its address loses every way in and session it held and becomes verified,
     * in one transaction, decided on the account as stored inside it; a verified one is left as
     * it is. Answers the account as it now is (its credential version moved by a takeover).
     */
    const confirmAddress = (user: User, proof: AddressProof) =>
      Effect.gen(function* () {
        if (user.is_verified) return { user, takenOver: false }
        const takeover = yield* tx.transaction(
          Effect.gen(function* () {
            if (!(yield* users.changeCredentials(user.id))) return yield* new CredentialsChangedError()
            const stored = yield* users.findById(user.id)
            if (Option.isNone(stored)) return yield* new CredentialsChangedError()
            const decision = decideProofOfAddress(stored.value, yield* held(user.id))
            if (decision._tag === "Keep") return null
            return yield* evictAnnounced(user, decision.eviction, proof)
          })
        )
        const now = yield* users.findById(user.id)
        if (Option.isNone(now)) return yield* new CredentialsChangedError()
        if (takeover !== null) {
          yield* Effect.logInfo("a proof of the address took over an account that had never proved it").pipe(
            Effect.annotateLogs({ user_id: user.id, proof })
          )
          yield* told(takeover)
        }
        return { user: now.value, takenOver: takeover !== null }
      })

    return { held, requireRecentSignIn, change, remove, proveAddress, confirmAddress } as const
  })
}) {}
