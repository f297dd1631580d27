import * as Statement from "@effect/sql/Statement"
import { DateTime, Effect, Option } from "effect"
import { RefreshTokenRepo } from "../../application/ports/RefreshTokenRepo.js"
import { UserRepo } from "../../application/ports/UserRepo.js"
import { Actor, type AuditEntry, type AuditEventType } from "../../domain/Audit.js"
import { FamilyId, StoredRefreshToken, TokenFamily } from "../../domain/Session.js"
import { Email, type UserId } from "../../domain/User.js"

/**
 * What the repositories' tests build over and over: a user, a session (a token family) and its
 * tokens, all at a fixed time that lives `SESSION_TTL`, an audit entry; and the statements an
 * effect sends through the SQL client, to tell which connection served it.
 */

export const at = DateTime.unsafeMake(Date.UTC(2034, 5, 6, 7, 8, 9, 123))
export const SESSION_TTL = "30 days"
const until = DateTime.addDuration(at, SESSION_TTL)

/** An active, unverified user with a password and no custom fields. */
export const newUser = (address: string) =>
  Effect.flatMap(UserRepo, (users) =>
    users.create({
      email: Email.make(address),
      hashed_password: Option.some("$argon2id$v=19$m=19456,t=2,p=1$salt$hash"),
      is_active: true,
      is_verified: false,
      is_superuser: false,
      fields: {}
    })
  )

/** A live family of `userId`, started `at`, with no client recorded. */
export const familyOf = (userId: UserId, id: string) =>
  new TokenFamily({
    family_id: FamilyId.make(id),
    user_id: userId,
    ip_address: null,
    user_agent: null,
    created_at: at,
    last_used_at: at,
    expires_at: until,
    revoked_at: Option.none()
  })

/** An unspent refresh token of family `familyId`, issued `at`. */
export const tokenOf = (digest: string, familyId: string) =>
  new StoredRefreshToken({
    digest,
    family_id: FamilyId.make(familyId),
    issued_at: at,
    expires_at: until,
    rotated_at: Option.none(),
    sealed_successor: Option.none()
  })

/** Starts family `id` of `userId`, its first token's digest `digest-<id>`. */
export const startFamily = (userId: UserId, id: string) =>
  Effect.flatMap(RefreshTokenRepo, (families) =>
    families.startFamily(familyOf(userId, id), tokenOf(`digest-${id}`, id))
  )

/** An audit entry of `type` about `user` (its actor too), at `millis`, from a fixed client. */
export const auditEntry = (
  type: AuditEventType,
  user: UserId | null,
  millis: number,
  details: AuditEntry["details"] = {}
): AuditEntry => ({
  occurred_at: DateTime.unsafeMake(millis),
  type,
  user_id: user,
  actor: user === null ? Actor.none : Actor.user(user),
  ip_address: "192.0.2.1",
  user_agent: "contract/1.0",
  details
})

/** `effect`'s value, and the SQL text and parameters of every statement it ran through the client. */
export const clientStatements = <A, E, R>(effect: Effect.Effect<A, E, R>) =>
  Effect.gen(function* () {
    const statements: Array<readonly [string, ReadonlyArray<unknown>]> = []
    const value = yield* Statement.withTransformer(effect, (statement) =>
      Effect.sync(() => {
        statements.push(statement.compile())
        return statement
      })
    )
    return { value, statements }
  })
