import { Effect, Option, Schema } from "effect"
import { Actor } from "../domain/Audit.js"
import { AuthEvent } from "../domain/Events.js"
import { OAuthError } from "../domain/errors.js"
import { decideSignIn, OAuthUserInfo, providerEmail, type SignInDecision, type SignInRefusal } from "../domain/OAuth.js"
import type { ClientInfo } from "../domain/Session.js"
import type { LoginResponse } from "../domain/Token.js"
import { toPublicUser, type User } from "../domain/User.js"
import { WayInChange } from "../domain/WaysIn.js"
import { Audit } from "./Audit.js"
import { AuthPolicy } from "./AuthPolicy.js"
import { countedSignIn } from "./metrics.js"
import { type Callback, OAuthFlow } from "./OAuthFlow.js"
import { Events } from "./ports/Events.js"
import { type AccountTokens, OAuthAccountRepo } from "./ports/OAuthAccountRepo.js"
import { Transaction } from "./ports/Transaction.js"
import { UserRepo } from "./ports/UserRepo.js"
import { Sessions } from "./Sessions.js"
import { WaysIn } from "./WaysIn.js"
import { Webhooks } from "./Webhooks.js"

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
 * Social sign-in through OAuth providers (spec: OAuth routes, rules 1–3). The account rule is
 * the domain's (domain/OAuth.ts); this service gathers its facts and carries out what it decides.
 */
export class OAuthSignIn extends Effect.Service<OAuthSignIn>()("app/OAuthSignIn", {
  effect: Effect.gen(function* () {
    const flow = yield* OAuthFlow
    const accounts = yield* OAuthAccountRepo
    const users = yield* UserRepo
    const sessions = yield* Sessions
    const events = yield* Events
    const webhooks = yield* Webhooks
    const policy = yield* AuthPolicy
    const audit = yield* Audit
    const tx = yield* Transaction
    const waysIn = yield* WaysIn

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
     * The auto-link (spec rule 3) is a proof of the address the provider vouches for
     * (domain/WaysIn.ts): an account that never proved it loses every way in its registrant
     * added (the takeover), then the provider account is linked, in one transaction. Answers the
     * user as it now is, and whether it was taken over.
     */
    const autoLink = Effect.fnUntraced(function* (user: User, info: OAuthUserInfo, tokens: AccountTokens) {
      const { takenOver } = yield* waysIn
        .proveAddress(
          user,
          "provider_verified_email",
          WayInChange.ProviderLinked({ provider: info.provider, automatic: true }),
          linkTo(user, info, tokens),
          { actor: Actor.user(user.id), details: { provider: info.provider } }
        )
        .pipe(Effect.catchTag("CredentialsChangedError", () => Effect.fail(refused)))
      const now = yield* users.findById(user.id)
      if (Option.isNone(now)) return yield* refused
      return { user: now.value, takenOver }
    })

    /** A new user and its link, together: a link refused by a racing one leaves no account behind. */
    const create = Effect.fnUntraced(function* (info: OAuthUserInfo, email: User["email"], tokens: AccountTokens) {
      const user = yield* tx.transaction(
        Effect.tap(
          users
            .create({ email, hashed_password: Option.none(), is_active: true, is_verified: true, is_superuser: false })
            .pipe(Effect.catchTag("UserAlreadyExistsError", () => Effect.fail(refused))),
          (created) =>
            Effect.zipRight(
              linkTo(created, info, tokens),
              Effect.zipRight(
                webhooks.publishEvent(AuthEvent.after_register({ user: toPublicUser(created) })),
                webhooks.publishEvent(
                  AuthEvent.after_oauth_register({ user: toPublicUser(created), user_info: encodeInfo(info) })
                )
              )
            )
        )
      )
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

    /** Carries out the account rule's decision: the user to sign in, and how the sign-in reached it. */
    const carryOut = (decision: Granted, info: OAuthUserInfo, tokens: AccountTokens) => {
      switch (decision._tag) {
        case "SignInLinked":
          return Effect.as(accounts.updateTokens(decision.account.id, tokens), {
            user: decision.user,
            outcome: "linked" as const
          })
        case "AutoLink":
          return Effect.map(autoLink(decision.user, info, tokens), ({ user, takenOver }) => ({
            user,
            outcome: takenOver ? ("takeover" as const) : ("auto_linked" as const)
          }))
        case "Create":
          return Effect.map(create(info, decision.email, tokens), (user) => ({ user, outcome: "created" as const }))
      }
    }

    /** The sign-in callback (spec rule 2): state, code, user info, the account rule, then a session. */
    const signIn = Effect.fn("OAuth.signIn")(function* (name: string, callback: Callback, client: ClientInfo) {
      const { tokens, info } = yield* flow.identify(name, callback, { purpose: "oauth_state" })
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
      const { user, outcome } = yield* carryOut(decision, info, yield* flow.stored(tokens, info))
      const isNew = outcome === "created"
      const signedIn = AuthEvent.after_oauth_login({ user: toPublicUser(user), provider: name, is_new_user: isNew })
      const pair = yield* sessions
        .start(user, client, { method: "oauth", provider: name, outcome }, signedIn)
        .pipe(Effect.catchTags({ UserNotFoundError: () => refused, CredentialsChangedError: () => refused }))
      yield* events.emit(signedIn)
      return { ...pair, user: toPublicUser(user) } satisfies LoginResponse
    }, countedSignIn("oauth"))

    return {
      providers: flow.providers,
      /** The sign-in flow's start: the authorization URL and the binding. */
      authorize: (name: string, redirectUri: string) => flow.start(name, redirectUri, { purpose: "oauth_state" }),
      signIn
    } as const
  })
}) {}
