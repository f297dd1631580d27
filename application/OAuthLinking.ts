import { Effect } from "effect"
import { Actor } from "../domain/Audit.js"
import { AuthEvent } from "../domain/Events.js"
import {
  LinkedAccountNotFoundError,
  OAuthAccountAlreadyLinkedError,
  OAuthProviderAlreadyLinkedError
} from "../domain/errors.js"
import { decideLink } from "../domain/OAuth.js"
import { toPublicUser, type UserId } from "../domain/User.js"
import { Removal, WayInChange } from "../domain/WaysIn.js"
import { type Callback, OAuthFlow } from "./OAuthFlow.js"
import { Events } from "./ports/Events.js"
import { OAuthAccountRepo } from "./ports/OAuthAccountRepo.js"
import type { Principal } from "./Sessions.js"
import { WaysIn } from "./WaysIn.js"

/** The provider account a link callback linked (or found linked to the caller already). */
export interface LinkedIdentity {
  readonly provider: string
  readonly provider_user_id: string
  readonly provider_email: string | null
}

/**
 * A signed-in user's provider accounts: linked, listed and unlinked (spec: OAuth routes, rules
 * 4–6). The link and unlink rules are the domain's (domain/OAuth.ts). Linking never makes or
 * changes a session, and never edits the user.
 */
export class OAuthLinking extends Effect.Service<OAuthLinking>()("app/OAuthLinking", {
  effect: Effect.gen(function* () {
    const flow = yield* OAuthFlow
    const accounts = yield* OAuthAccountRepo
    const events = yield* Events
    const waysIn = yield* WaysIn

    /**
     * The link callback (spec rules 4 and 5): the state must have been issued to the caller, and
     * a new link is a new way in, so the caller's sign-in must be recent (domain/WaysIn.ts).
     */
    const link = Effect.fn("OAuth.link")(function* (principal: Principal, name: string, callback: Callback) {
      const caller = principal.user.id
      yield* waysIn.requireRecentSignIn(principal)
      const { tokens, info } = yield* flow.identify(name, callback, { purpose: "oauth_link_state", caller })
      const [identity, callersAccount] = yield* Effect.all([
        accounts.findByProviderAccount(name, info.provider_user_id),
        accounts.findOf(caller, name)
      ])
      const fresh = yield* flow.stored(tokens, info)
      const decision = decideLink({ caller, identity, callersAccount })
      switch (decision._tag) {
        case "Relink":
          yield* accounts.updateTokens(decision.account.id, fresh)
          break
        case "Link": {
          const linked = AuthEvent.after_oauth_link({ user: toPublicUser(principal.user), provider: name })
          yield* waysIn.change(
            principal.user,
            WayInChange.ProviderLinked({ provider: name, automatic: false }),
            accounts.link({ provider: name, provider_user_id: info.provider_user_id, user_id: caller, ...fresh }),
            {
              actor: Actor.user(caller),
              details: { provider: name },
              expectedVersion: principal.user.credential_version,
              event: linked
            }
          )
          yield* events.emit(linked)
          break
        }
        case "AccountLinkedToOther":
          return yield* new OAuthAccountAlreadyLinkedError()
        case "ProviderAlreadyLinked":
          return yield* new OAuthProviderAlreadyLinkedError()
      }
      return {
        provider: name,
        provider_user_id: info.provider_user_id,
        provider_email: info.email
      } satisfies LinkedIdentity
    })

    /** Unlinks the caller's account of the provider, unless it is the last way to sign in (spec rule 6). */
    const unlink = Effect.fn("OAuth.unlink")(function* (principal: Principal, provider: string) {
      const user = principal.user
      const unlinked = AuthEvent.after_oauth_unlink({ user: toPublicUser(user), provider })
      yield* waysIn.remove(
        principal,
        Removal.Provider({ provider }),
        WayInChange.ProviderUnlinked({ provider }),
        accounts.unlink(user.id, provider),
        () => new LinkedAccountNotFoundError(),
        { provider },
        unlinked
      )
      yield* events.emit(unlinked)
    })

    return {
      /** The link flow's start, for the signed-in caller, whose sign-in must be recent. */
      authorizeLink: (principal: Principal, name: string, redirectUri: string) =>
        Effect.zipRight(
          waysIn.requireRecentSignIn(principal),
          flow.start(name, redirectUri, { purpose: "oauth_link_state", caller: principal.user.id })
        ),
      link,
      /** The caller's linked accounts, by provider. */
      accounts: (userId: UserId) => accounts.listOf(userId),
      unlink
    } as const
  })
}) {}
