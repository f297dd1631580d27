import { DateTime, Effect, Option } from "effect"
import { FamilyId } from "../../domain/Session.js"
import type { TokenPayload } from "../../domain/Token.js"
import { UserId } from "../../domain/User.js"
import { Cryptography } from "../ports/Cryptography.js"
import { TokenHolders } from "../ports/TokenHolders.js"
import { TokenSigner } from "../ports/TokenSigner.js"
import { Sessions } from "../Sessions.js"
import type { BrowserSession } from "./Authorize.js"
import { OidcPolicy } from "./OidcPolicy.js"

/** The provider's browser session as found by its cookie: who, since when and how, and the session it rides on. */
export interface FoundBrowserSession extends BrowserSession {
  readonly family_id: string
}

/**
 * The provider's browser session (`portcullis_op`): a signed token of its own purpose naming a
 * session of the user (a family), made only by a sign-in through the provider's session route,
 * never from a bearer access token. It is good while its session is: listed in GET /sessions,
 * ended by everything that ends sessions (sign-out, a reset, MAX_SESSIONS_PER_USER, end-session).
 */
export class BrowserSessions extends Effect.Service<BrowserSessions>()("app/BrowserSessions", {
  effect: Effect.gen(function* () {
    const signer = yield* TokenSigner
    const holders = yield* TokenHolders
    const sessions = yield* Sessions
    const crypto = yield* Cryptography
    const { lifetimes } = yield* OidcPolicy

    /**
     * The cookie for a sign-in that just happened, and the session it names: from the access token
     * the sign-in answered (its user, session and sign-in time), and how the user proved themselves.
     */
    const start = (accessToken: string, amr: ReadonlyArray<string>) =>
      Effect.gen(function* () {
        const claims = yield* signer.verify(accessToken, "access")
        const iat = Math.floor(DateTime.toEpochMillis(yield* DateTime.now) / 1000)
        const payload = {
          type: "provider_session" as const,
          sub: claims.sub,
          family_id: claims.family_id,
          auth_time: claims.auth_time ?? iat,
          amr,
          jti: yield* crypto.randomId,
          iat,
          exp: iat + lifetimes.refreshSeconds
        }
        return { cookie: yield* signer.sign(payload), session: sessionOf(payload) }
      })

    /** The user and claims of a cookie whose session is live, the user active. */
    const principal = (cookie: string) =>
      Effect.gen(function* () {
        const claims = yield* Effect.option(signer.verify(cookie, "provider_session"))
        if (Option.isNone(claims) || claims.value.family_id === null) return Option.none()
        const found = yield* holders.find(UserId.make(claims.value.sub), FamilyId.make(claims.value.family_id))
        if (Option.isNone(found) || found.value.sessionEnded || !found.value.user.is_active) return Option.none()
        return Option.some({ user: found.value.user, claims: claims.value })
      })

    /** The browser's session by its cookie, if it is good. */
    const find = (cookie: string | undefined) =>
      cookie === undefined || cookie === ""
        ? Effect.succeed(Option.none<FoundBrowserSession>())
        : Effect.map(
            principal(cookie),
            Option.map(({ claims }) => sessionOf(claims))
          )

    /** Signs the browser out: its session ends, as a sign-out ends it. */
    const end = (cookie: string | undefined) =>
      cookie === undefined || cookie === ""
        ? Effect.void
        : Effect.flatMap(
            principal(cookie),
            Option.match({ onNone: () => Effect.void, onSome: (found) => sessions.logout(found) })
          )

    return { start, find, end } as const
  })
}) {}

const sessionOf = (
  claims: Pick<TokenPayload, "sub" | "auth_time" | "iat" | "amr" | "family_id">
): FoundBrowserSession => ({
  user_id: claims.sub,
  auth_time: claims.auth_time ?? claims.iat,
  amr: claims.amr ?? [],
  family_id: claims.family_id ?? ""
})
