import { DateTime, Effect, Option } from "effect"
import { SessionNotFoundError } from "../domain/errors.js"
import { FamilyId, sessionList } from "../domain/Session.js"
import { RefreshTokenRepo } from "./ports/RefreshTokenRepo.js"
import { type Principal, Tokens } from "./Tokens.js"

/** The session (family) the caller's access token belongs to, if it names one. */
const currentFamily = (principal: Principal): Option.Option<FamilyId> =>
  Option.map(Option.fromNullable(principal.claims.family_id), FamilyId.make)

/**
 * The signed-in user's view of their own sessions: list them, end one, end all the others.
 * Ending a session goes through Tokens, so its refresh tokens and its access tokens die together.
 */
export class ActiveSessions extends Effect.Service<ActiveSessions>()("app/ActiveSessions", {
  effect: Effect.gen(function* () {
    const families = yield* RefreshTokenRepo
    const tokens = yield* Tokens

    /** The caller's live sessions, most recently used first, their own marked current. */
    const list = Effect.fn("ActiveSessions.list")(function* (principal: Principal) {
      const now = yield* DateTime.now
      const live = yield* families.liveFamiliesOf(principal.user.id, now)
      return sessionList(live, currentFamily(principal), now)
    })

    /**
     * Ends one of the caller's sessions. Unknown, ended, expired and other users' sessions all
     * answer the same SessionNotFoundError. Ending one's own current session is a logout: the
     * family's revocation covers the presented access token as well.
     */
    const revoke = Effect.fn("ActiveSessions.revoke")(function* (principal: Principal, familyId: FamilyId) {
      const ended = yield* tokens.endSessionOfUser(principal.user.id, familyId)
      if (!ended) return yield* new SessionNotFoundError()
    })

    /**
     * Ends every session of the caller but the current one, and answers how many live sessions
     * it ended. Families that had already expired are marked ended too (that costs nothing and
     * covers any access token still alive) but are not counted: the caller never saw them as
     * sessions.
     */
    const revokeOthers = Effect.fn("ActiveSessions.revokeOthers")(function* (principal: Principal) {
      const now = yield* DateTime.now
      const live = new Set(
        (yield* families.liveFamiliesOf(principal.user.id, now)).map((family) => family.family_id as string)
      )
      const ended = yield* tokens.endSessionsOf(principal.user.id, currentFamily(principal))
      return ended.filter((familyId) => live.has(familyId)).length
    })

    return { list, revoke, revokeOthers } as const
  })
}) {}
