import { DateTime, Duration, Effect, Option } from "effect"
import { OAuthError } from "../domain/errors.js"
import { checkState, type OAuthStateClaims, type StateProblem, stateClaimsOf } from "../domain/OAuth.js"
import { tokenWindow } from "../domain/Token.js"
import type { UserId } from "../domain/User.js"
import { AuthPolicy } from "./AuthPolicy.js"
import { Blacklist } from "./ports/Blacklist.js"
import { Cryptography } from "./ports/Cryptography.js"
import { TokenSigner } from "./ports/TokenSigner.js"

/** A flow's state as it leaves: the signed state for the provider, the binding for the client. */
export interface IssuedState {
  readonly state: string
  /** The client keeps it (never in a URL) and sends it with the callback. */
  readonly binding: string
  /** PKCE: derived from the state's nonce, so it never travels through the browser. */
  readonly codeVerifier: string
}

/** What a callback brings back. */
export interface ReturnedState {
  readonly state: string
  readonly binding: string
}

/** A state that passed every check and was spent. */
export interface AcceptedState {
  readonly claims: OAuthStateClaims
  readonly codeVerifier: string
}

/** Which flow a state belongs to: a sign-in, or a link started by `caller`. */
export type Flow =
  | { readonly purpose: "oauth_state" }
  | { readonly purpose: "oauth_link_state"; readonly caller: UserId }

const invalid = new OAuthError({ message: "The OAuth state is invalid or has expired; start again." })

const refusals: Readonly<Record<StateProblem, OAuthError>> = {
  purpose: invalid,
  provider: invalid,
  binding: new OAuthError({ message: "The binding does not match the OAuth state." }),
  link_user: new OAuthError({ message: "The OAuth state was not issued to the signed-in user." })
}

/**
 * OAuth state tokens (spec: OAuth state token and binding). A state is a signed token of its
 * flow's purpose that carries the SHA-256 of the binding the client keeps, a nonce, the provider
 * and the callback URL, and for a link the caller's id in a claim of its own. At the callback
 * it is verified first (signature, lifetime, purpose, provider, binding, caller) and then burned,
 * so a wrong binding does not spend the state of the client that holds the right one.
 */
export class OAuthStates extends Effect.Service<OAuthStates>()("app/OAuthStates", {
  effect: Effect.gen(function* () {
    const signer = yield* TokenSigner
    const blacklist = yield* Blacklist
    const crypto = yield* Cryptography
    const { tokens, oauth } = yield* AuthPolicy

    const lifetime = Duration.seconds(oauth.oauthStateExpireSeconds)
    const verifierOf = (nonce: string) => crypto.mac("oauth-pkce", nonce)

    const issue = Effect.fnUntraced(function* (provider: string, redirectUri: string, flow: Flow) {
      const binding = yield* crypto.randomSecret
      const nonce = yield* crypto.randomSecret
      const state = yield* signer.sign({
        sub: provider,
        type: flow.purpose,
        jti: yield* crypto.randomId,
        ...tokenWindow(yield* DateTime.now, lifetime),
        binding_digest: crypto.digest(binding),
        nonce,
        provider,
        redirect_uri: redirectUri,
        ...(flow.purpose === "oauth_link_state" ? { link_user_id: flow.caller } : {})
      })
      return { state, binding, codeVerifier: verifierOf(nonce) } satisfies IssuedState
    })

    /**
     * With BLACKLIST_ENABLED=false nothing is burned: a state can be replayed within its lifetime
     * by whoever holds it and its binding (start-up warns).
     */
    const burn = (jti: string, exp: number) =>
      tokens.blacklistEnabled
        ? blacklist.burn(jti, DateTime.unsafeMake((exp + tokens.jwtLeewaySeconds) * 1000))
        : Effect.succeed(true)

    const accept = Effect.fnUntraced(function* (provider: string, returned: ReturnedState, flow: Flow) {
      const payload = yield* signer.verify(returned.state, flow.purpose).pipe(Effect.mapError(() => invalid))
      const claims = yield* Option.match(stateClaimsOf(payload), {
        onNone: () => Effect.fail(invalid),
        onSome: Effect.succeed
      })
      const expected = { provider, bindingDigest: crypto.digest(returned.binding) }
      const check = checkState(
        claims,
        flow.purpose === "oauth_state"
          ? { purpose: flow.purpose, ...expected }
          : { purpose: flow.purpose, ...expected, caller: flow.caller }
      )
      if (check._tag === "Invalid") return yield* refusals[check.problem]
      if (!(yield* burn(payload.jti, payload.exp))) {
        return yield* new OAuthError({ message: "The OAuth state was used already; start again." })
      }
      return { claims, codeVerifier: verifierOf(claims.nonce) } satisfies AcceptedState
    })

    return { issue, accept } as const
  })
}) {}
