import { Context, type Duration, type Effect, type Option } from "effect"
import type { StoreUnavailableError } from "./StoreUnavailableError.js"

/**
 * Passkey challenges, each under a key the caller makes (`passkey:reg:<random>`,
 * `passkey:auth:<random>`) and for a lifetime (PASSKEY_CHALLENGE_TTL). A challenge is taken at
 * most once, so a ceremony can never be completed twice with it, and never once its lifetime
 * is over. Several workers need the Redis adapter: a challenge issued by one is completed on
 * any.
 */
export class ChallengeStore extends Context.Tag("app/ChallengeStore")<
  ChallengeStore,
  {
    /** Keeps `challenge` under `key` for `ttl`, replacing what the key held. */
    readonly put: (key: string, challenge: string, ttl: Duration.Duration) => Effect.Effect<void, StoreUnavailableError>
    /**
     * Removes the challenge and answers it, in one atomic step: of any number of concurrent
     * takes of one key, at most one answers it. None when the key is unknown, taken or expired.
     */
    readonly take: (key: string) => Effect.Effect<Option.Option<string>, StoreUnavailableError>
  }
>() {}
