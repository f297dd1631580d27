import { DateTime, Duration, Effect, Option, Redacted } from "effect"
import { OAuthProviderNotFoundError } from "../domain/errors.js"
import type { OAuthUserInfo } from "../domain/OAuth.js"
import { type Flow, OAuthStates, type ReturnedState } from "./OAuthStates.js"
import { Cryptography } from "./ports/Cryptography.js"
import type { AccountTokens } from "./ports/OAuthAccountRepo.js"
import { OAuthProviders, type ProviderTokens } from "./ports/OAuthProviders.js"

/** What a callback brings: the provider's code, and the state and binding of the flow. */
export interface Callback extends ReturnedState {
  readonly code: string
}

/** Where to send the browser, and the binding the client keeps for the callback. */
export interface AuthorizationStart {
  readonly authorization_url: string
  readonly binding: string
}

/**
 * The steps the sign-in and the link flows share: the provider by name, the authorization URL
 * with a fresh state, the callback's state spent and its code exchanged, and the provider's
 * tokens sealed for storage. What each flow then does with the identity is its own.
 */
export class OAuthFlow extends Effect.Service<OAuthFlow>()("app/OAuthFlow", {
  effect: Effect.gen(function* () {
    const providers = yield* OAuthProviders
    const states = yield* OAuthStates
    const crypto = yield* Cryptography

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
    const identify = Effect.fnUntraced(function* (name: string, callback: Callback, flow: Flow) {
      const provider = yield* providerNamed(name)
      const { claims, codeVerifier } = yield* states.accept(provider.name, callback, flow)
      return yield* provider.identify({ code: callback.code, redirectUri: claims.redirect_uri, codeVerifier })
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

    return {
      /** The configured providers' names. */
      providers: providers.names,
      start,
      identify,
      stored
    } as const
  })
}) {}
