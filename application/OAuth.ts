import { DateTime, Duration, Effect, Option, Redacted, Schema } from "effect"
import { Actor } from "../domain/Audit.js"
import { AuthEvent } from "../domain/Events.js"
import {
  LastSignInMethodError,
  LinkedAccountNotFoundError,
  OAuthAccountAlreadyLinkedError,
  OAuthError,
  OAuthProviderAlreadyLinkedError,
  OAuthProviderNotFoundError
} from "../domain/errors.js"
import {
  decideLink,
  decideSignIn,
  decideUnlink,
  OAuthUserInfo,
  providerEmail,
  type SignInDecision,
  type SignInRefusal
} from "../domain/OAuth.js"
import type { ClientInfo } from "../domain/Session.js"
import { canSignIn } from "../domain/SignInMethods.js"
import type { LoginResponse } from "../domain/Token.js"
import { toPublicUser, type User, type UserId } from "../domain/User.js"
import { Audit } from "./Audit.js"
import { AuthPolicy } from "./AuthPolicy.js"
import { countedSignIn } from "./metrics.js"
import { type Flow, OAuthStates, type ReturnedState } from "./OAuthStates.js"
import { Cryptography } from "./ports/Cryptography.js"
import { Events } from "./ports/Events.js"
import { type AccountTokens, OAuthAccountRepo } from "./ports/OAuthAccountRepo.js"
import { type OAuthProviderClient, OAuthProviders, type ProviderTokens } from "./ports/OAuthProviders.js"
import { PasskeyRepo } from "./ports/PasskeyRepo.js"
import { UserRepo } from "./ports/UserRepo.js"
import { type Principal, Sessions } from "./Sessions.js"
import { currentSignInMethods } from "./signInMethods.js"

/** What a callback brings: the provider's code, and the state and binding of the flow. */
export interface Callback extends ReturnedState {
  readonly code: string
}

/** Where to send the browser, and the binding the client keeps for the callback. */
export interface AuthorizationStart {
  readonly authorization_url: string
  readonly binding: string
}

/** The provider account a link callback linked (or found linked to the caller already). */
export interface LinkedIdentity {
  readonly provider: string
  readonly provider_user_id: string
  readonly provider_email: string | null
}

/**
 * Every refused sign-in (spec rule 3) answers this one sentence, whatever the reason: it must
 * not tell which address has an account or which provider it linked. The reason is logged.
 */
const refused = new OAuthError({
  message: "This provider account cannot be used to sign in here. Sign in another way, then link it from your account."
})

const encodeInfo = Schema.encodeSync(OAuthUserInfo)

/** The account rule's decisions that sign someone in. */
type Granted = Exclude<SignInDecision, { readonly _tag: "Refuse" }>

/**
 * Social sign-in and account linking through OAuth providers (spec: OAuth routes, rules 1–8).
 * The account rule, the link rule and the unlink rule are the domain's (domain/OAuth.ts); this
 * service gathers their facts and carries out what they decide.
 */
export class OAuth extends Effect.Service<OAuth>()("app/OAuth", {
  effect: Effect.gen(function* () {
    const providers = yield* OAuthProviders
    const states = yield* OAuthStates
    const accounts = yield* OAuthAccountRepo
    const users = yield* UserRepo
    const passkeys = yield* PasskeyRepo
    const crypto = yield* Cryptography
    const sessions = yield* Sessions
    const events = yield* Events
    const policy = yield* AuthPolicy
    const audit = yield* Audit
    const methodsOf = currentSignInMethods(users, accounts, passkeys)

    const providerNamed = (name: string) =>
      Option.match(providers.get(name), {
        onNone: () => Effect.fail(new OAuthProviderNotFoundError()),
        onSome: (provider) => Effect.succeed(provider)
      })

    const start = Effect.fnUntraced(function* (name: string, redirectUri: string, flow: Flow) {
      const provider = yield* providerNamed(name)
      const issued = yield* states.issue(name, redirectUri, flow)
      const authorization_url = yield* provider.authorizationUrl({
        state: issued.state,
        redirectUri,
        codeVerifier: issued.codeVerifier
      })
      return { authorization_url, binding: issued.binding } satisfies AuthorizationStart
    })

    /** The callback's state accepted and spent, its code exchanged, and who the provider says the user is. */
    const identify = Effect.fnUntraced(function* (provider: OAuthProviderClient, callback: Callback, flow: Flow) {
      const { claims, codeVerifier } = yield* states.accept(provider.name, callback, flow)
      const tokens = yield* provider.exchangeCode({
        code: callback.code,
        redirectUri: claims.redirect_uri,
        codeVerifier
      })
      const info = yield* provider.userInfo(tokens.access_token)
      return { tokens, info }
    })

    /** The provider's tokens sealed for storage, with the email it gave, for display only. */
    const stored = Effect.fnUntraced(function* (tokens: ProviderTokens, info: OAuthUserInfo) {
      const seal = (token: Redacted.Redacted<string> | undefined) =>
        token === undefined ? Effect.succeedNone : Effect.asSome(crypto.seal(Redacted.value(token)))
      const now = yield* DateTime.now
      return {
        provider_email: Option.fromNullable(info.email),
        access_token: yield* seal(tokens.access_token),
        refresh_token: yield* seal(tokens.refresh_token),
        expires_at: Option.map(Option.fromNullable(tokens.expires_in), (seconds) =>
          DateTime.addDuration(now, Duration.seconds(seconds))
        )
      } satisfies AccountTokens
    })

    /** What the account rule needs to know: the linked account and its user, else the email's holder. */
    const signInFacts = Effect.fnUntraced(function* (info: OAuthUserInfo) {
      const account = yield* accounts.findByProviderAccount(info.provider, info.provider_user_id)
      if (Option.isSome(account)) {
        const owner = yield* users.findById(account.value.user_id)
        if (Option.isSome(owner)) {
          return { linked: Option.some({ account: account.value, user: owner.value }), emailHolder: Option.none() }
        }
      }
      const email = providerEmail(info)
      const holder = Option.isSome(email) ? yield* users.findByLogin("email", email.value) : Option.none<User>()
      const emailHolder = Option.isSome(holder)
        ? Option.some({
            user: holder.value,
            linkedProviders: (yield* accounts.listOf(holder.value.id)).map((linked) => linked.provider)
          })
        : Option.none()
      return { linked: Option.none(), emailHolder }
    })

    /** A new link of the provider account to `user`; a racing link of the same account refuses the sign-in. */
    const linkTo = (user: User, info: OAuthUserInfo, tokens: AccountTokens) =>
      accounts
        .link({ provider: info.provider, provider_user_id: info.provider_user_id, user_id: user.id, ...tokens })
        .pipe(
          Effect.catchTags({
            OAuthAccountAlreadyLinkedError: () => Effect.fail(refused),
            OAuthProviderAlreadyLinkedError: () => Effect.fail(refused)
          })
        )

    /**
     * The takeover guard (DECISIONS): the holder of an address nobody proved is not the one the
     * provider vouches for, so whoever registered it loses its password and sessions, and the
     * account becomes verified, before the provider account is linked to it.
     */
    const takeOver = Effect.fnUntraced(function* (user: User) {
      yield* Effect.logInfo("auto-link takes over an account whose email was never verified").pipe(
        Effect.annotateLogs({ user_id: user.id })
      )
      yield* sessions.endAll(user.id, Option.none())
      yield* users.clearPassword(user.id)
      const verified = yield* users.setFlags(user.id, { is_verified: true })
      return yield* Option.match(verified, { onNone: () => Effect.fail(refused), onSome: Effect.succeed })
    })

    const create = Effect.fnUntraced(function* (info: OAuthUserInfo, email: User["email"], tokens: AccountTokens) {
      const user = yield* users
        .create({ email, hashed_password: Option.none(), is_active: true, is_verified: true, is_superuser: false })
        .pipe(Effect.catchTag("UserAlreadyExistsError", () => Effect.fail(refused)))
      yield* linkTo(user, info, tokens)
      yield* events.emit(AuthEvent.after_register({ user: toPublicUser(user) }))
      yield* events.emit(AuthEvent.after_oauth_register({ user: toPublicUser(user), user_info: encodeInfo(info) }))
      return user
    })

    /**
     * A refused sign-in: recorded with its reason, against the account it would have reached
     * (the linked user, or the holder of the provider's email) when there is one, and answered in
     * the one sentence.
     */
    const refuse = (info: OAuthUserInfo, reason: SignInRefusal | "inactive", target: Option.Option<User>) =>
      Effect.logInfo("OAuth sign-in refused").pipe(
        Effect.annotateLogs({ provider: info.provider, reason }),
        Effect.zipRight(
          audit.record({
            type: "sign_in.failed",
            user_id: Option.getOrNull(Option.map(target, (user) => user.id)),
            details: { method: "oauth", provider: info.provider, reason }
          })
        ),
        Effect.zipRight(Effect.fail(refused))
      )

    /** Carries out the account rule's decision: the user to sign in, and whether it is new. */
    const carryOut = (decision: Granted, info: OAuthUserInfo, tokens: AccountTokens) => {
      switch (decision._tag) {
        case "SignInLinked":
          return Effect.as(accounts.updateTokens(decision.account.id, tokens), { user: decision.user, isNew: false })
        case "AutoLink":
          return Effect.gen(function* () {
            const user = decision.takeover ? yield* takeOver(decision.user) : decision.user
            yield* linkTo(user, info, tokens)
            return { user, isNew: false }
          })
        case "Create":
          return Effect.map(create(info, decision.email, tokens), (user) => ({ user, isNew: true }))
      }
    }

    /** The sign-in callback (spec rule 2): state, code, user info, the account rule, then a session. */
    const signIn = Effect.fn("OAuth.signIn")(function* (name: string, callback: Callback, client: ClientInfo) {
      const provider = yield* providerNamed(name)
      const { tokens, info } = yield* identify(provider, callback, { purpose: "oauth_state" })
      const facts = yield* signInFacts(info)
      const decision = decideSignIn({ ...facts, info, autoLinkByEmail: policy.oauth.oauthAutoLinkByEmail })
      if (decision._tag === "Refuse") {
        return yield* refuse(
          info,
          decision.reason,
          Option.map(facts.emailHolder, (holder) => holder.user)
        )
      }
      // Refused before anything is done: a deactivated user is neither linked nor taken over.
      if (decision._tag !== "Create" && !decision.user.is_active) {
        return yield* refuse(info, "inactive", Option.some(decision.user))
      }
      const { user, isNew } = yield* carryOut(decision, info, yield* stored(tokens, info))
      const outcome = isNew
        ? "created"
        : decision._tag === "AutoLink"
          ? decision.takeover
            ? "takeover"
            : "auto_linked"
          : "linked"
      const pair = yield* sessions
        .start(user, client, { method: "oauth", provider: name, outcome })
        .pipe(Effect.catchTag("UserNotFoundError", () => refused))
      yield* events.emit(AuthEvent.after_oauth_login({ user: toPublicUser(user), provider: name, is_new_user: isNew }))
      return { ...pair, user: toPublicUser(user) } satisfies LoginResponse
    }, countedSignIn("oauth"))

    /**
     * The link callback (spec rules 4 and 5): the state must have been issued to the caller. No
     * session is made or changed, and the user is never edited or marked verified.
     */
    const link = Effect.fn("OAuth.link")(function* (principal: Principal, name: string, callback: Callback) {
      const provider = yield* providerNamed(name)
      const caller = principal.user.id
      const { tokens, info } = yield* identify(provider, callback, { purpose: "oauth_link_state", caller })
      const [identity, callersAccount] = yield* Effect.all([
        accounts.findByProviderAccount(name, info.provider_user_id),
        accounts.findOf(caller, name)
      ])
      const fresh = yield* stored(tokens, info)
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
    const unlink = Effect.fn("OAuth.unlink")(function* (principal: Principal, provider: string) {
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
      providers: providers.names,
      /** The sign-in flow's start: the authorization URL and the binding. */
      authorize: (name: string, redirectUri: string) => start(name, redirectUri, { purpose: "oauth_state" }),
      /** The link flow's start, for the signed-in caller. */
      authorizeLink: (principal: Principal, name: string, redirectUri: string) =>
        start(name, redirectUri, { purpose: "oauth_link_state", caller: principal.user.id }),
      signIn,
      link,
      /** The caller's linked accounts, by provider. */
      accounts: (userId: UserId) => accounts.listOf(userId),
      unlink
    } as const
  })
}) {}
