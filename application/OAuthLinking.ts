import { Effect, Option } from "effect"
import { Actor } from "../domain/Audit.js"
import { AuthEvent } from "../domain/Events.js"
import {
  LastSignInMethodError,
  LinkedAccountNotFoundError,
  OAuthAccountAlreadyLinkedError,
  OAuthProviderAlreadyLinkedError
} from "../domain/errors.js"
import { decideLink, decideUnlink } from "../domain/OAuth.js"
import { canSignIn } from "../domain/SignInMethods.js"
import { toPublicUser, type UserId } from "../domain/User.js"
import { Audit } from "./Audit.js"
import { type Callback, OAuthFlow } from "./OAuthFlow.js"
import { Events } from "./ports/Events.js"
import { OAuthAccountRepo } from "./ports/OAuthAccountRepo.js"
import { PasskeyRepo } from "./ports/PasskeyRepo.js"
import { UserRepo } from "./ports/UserRepo.js"
import type { Principal } from "./Sessions.js"
import { currentSignInMethods } from "./signInMethods.js"
import { spans } from "./spans.js"

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
    const span = yield* spans
    const flow = yield* OAuthFlow
    const accounts = yield* OAuthAccountRepo
    const users = yield* UserRepo
    const passkeys = yield* PasskeyRepo
    const events = yield* Events
    const audit = yield* Audit
    const methodsOf = currentSignInMethods(users, accounts, passkeys)

    /** The link callback (spec rules 4 and 5): the state must have been issued to the caller. */
    const link = span("OAuth.link")(function* (principal: Principal, name: string, callback: Callback) {
      const caller = principal.user.id
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
        case "Link":
          yield* audit.recordWith(
            accounts.link({ provider: name, provider_user_id: info.provider_user_id, user_id: caller, ...fresh }),
            () => ({ type: "oauth.linked", user_id: caller, actor: Actor.user(caller), details: { provider: name } })
          )
          yield* events.emit(AuthEvent.after_oauth_link({ user: toPublicUser(principal.user), provider: name }))
          break
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
    const unlink = span("OAuth.unlink")(function* (principal: Principal, provider: string) {
      const user = principal.user
      const [linked, passkeyCount] = yield* Effect.all([accounts.listOf(user.id), passkeys.countOf(user.id)])
      const decision = decideUnlink(provider, {
        hasPassword: Option.isSome(user.hashed_password),
        linkedProviders: linked.map((account) => account.provider),
        passkeys: passkeyCount
      })
      if (decision._tag === "NotLinked") return yield* new LinkedAccountNotFoundError()
      if (decision._tag === "LastWayToSignIn") return yield* new LastSignInMethodError()
      if (!(yield* accounts.unlink(user.id, provider))) return yield* new LinkedAccountNotFoundError()
      // A racing unlink of the user's other way in may have won meanwhile: the link comes back.
      if (!canSignIn(yield* methodsOf(user.id))) {
        const removed = linked.find((account) => account.provider === provider)
        if (removed !== undefined) {
          yield* accounts.link(removed).pipe(
            Effect.catchTags({
              OAuthAccountAlreadyLinkedError: () => Effect.void,
              OAuthProviderAlreadyLinkedError: () => Effect.void
            })
          )
        }
        return yield* new LastSignInMethodError()
      }
      yield* audit.record({
        type: "oauth.unlinked",
        user_id: user.id,
        actor: Actor.user(user.id),
        details: { provider }
      })
      yield* events.emit(AuthEvent.after_oauth_unlink({ user: toPublicUser(user), provider }))
    })

    return {
      /** The link flow's start, for the signed-in caller. */
      authorizeLink: (principal: Principal, name: string, redirectUri: string) =>
        flow.start(name, redirectUri, { purpose: "oauth_link_state", caller: principal.user.id }),
      link,
      /** The caller's linked accounts, by provider. */
      accounts: (userId: UserId) => accounts.listOf(userId),
      unlink
    } as const
  })
}) {}
