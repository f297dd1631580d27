import { DateTime, Duration, Effect, Option } from "effect"
import { type FamilyId, StoredRefreshToken } from "../domain/Session.js"
import { type TokenPair, tokenWindow } from "../domain/Token.js"
import { toPublicUser, type User } from "../domain/User.js"
import { validated } from "../domain/validated.js"
import { permissionsOf } from "./AccessControl.js"
import { AuthPolicy } from "./AuthPolicy.js"
import { Cryptography } from "./ports/Cryptography.js"
import { RoleRepo } from "./ports/RoleRepo.js"
import { TokenSigner } from "./ports/TokenSigner.js"

/** A session's pair of tokens and the refresh token's record, to be stored by whoever issued it. */
export interface IssuedPair {
  readonly pair: TokenPair
  readonly stored: StoredRefreshToken
}

/**
 * The issuing of a session's tokens, shared by the sign-in that starts a session (Sessions) and
 * the refresh that rotates it (Refresh): the function answers a pair for the session `familyId`,
 * whose sign-in happened at `signedInAt` (the access token's auth_time).
 */
export const pairIssuer = Effect.gen(function* () {
  const signer = yield* TokenSigner
  const crypto = yield* Cryptography
  const permissionsOfUser = permissionsOf(yield* RoleRepo)
  const { tokens: rules, customClaims } = yield* AuthPolicy
  const accessTokenTtl = Duration.minutes(rules.accessTokenExpireMinutes)
  const refreshTokenTtl = Duration.days(rules.refreshTokenExpireDays)
  const expiresIn = Math.floor(Duration.toSeconds(accessTokenTtl))

  return Effect.fnUntraced(function* (user: User, familyId: FamilyId, now: DateTime.Utc, signedInAt: DateTime.Utc) {
    const refresh = yield* signer.sign({
      sub: user.id,
      type: "refresh",
      jti: yield* crypto.randomId,
      ...tokenWindow(now, refreshTokenTtl),
      family_id: familyId
    })
    const access = yield* signer.sign({
      sub: user.id,
      type: "access",
      jti: yield* crypto.randomId,
      ...tokenWindow(now, accessTokenTtl),
      roles: user.roles,
      permissions: yield* permissionsOfUser(user),
      extra: Option.isSome(customClaims) ? yield* customClaims.value(toPublicUser(user)) : {},
      family_id: familyId,
      auth_time: Math.floor(DateTime.toEpochMillis(signedInAt) / 1000)
    })
    const pair: TokenPair = {
      access_token: access,
      refresh_token: refresh,
      token_type: "bearer",
      expires_in: expiresIn
    }
    const stored = new StoredRefreshToken(
      {
        digest: crypto.digest(refresh),
        family_id: familyId,
        issued_at: now,
        expires_at: DateTime.addDuration(now, refreshTokenTtl),
        rotated_at: Option.none(),
        sealed_successor: Option.none()
      },
      validated
    )
    return { pair, stored } satisfies IssuedPair
  })
})
