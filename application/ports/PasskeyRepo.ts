import { Context, type DateTime, type Effect, type Option } from "effect"
import type {
  CredentialId,
  CredentialRef,
  Passkey,
  PasskeyCredentialTakenError,
  PasskeyId
} from "../../domain/Passkey.js"
import type { User, UserId } from "../../domain/User.js"
import type { StoreUnavailableError } from "./StoreUnavailableError.js"

/**
 * Registered passkeys. A user's passkeys go with the user when it is deleted. Every operation
 * that names a user touches that user's passkeys only.
 */
export class PasskeyRepo extends Context.Tag("app/PasskeyRepo")<
  PasskeyRepo,
  {
    /**
     * Stores a new passkey. Fails with PasskeyCredentialTakenError when its credential id is
     * registered already, to anyone, atomically: no check-then-insert race.
     */
    readonly add: (passkey: Passkey) => Effect.Effect<void, PasskeyCredentialTakenError | StoreUnavailableError>
    /** The passkey of a credential, with its owner: what a sign-in with it is checked against. */
    readonly findByCredentialId: (
      credentialId: CredentialId
    ) => Effect.Effect<Option.Option<{ readonly passkey: Passkey; readonly user: User }>, StoreUnavailableError>
    /** The user's passkeys, oldest first. */
    readonly listOf: (userId: UserId) => Effect.Effect<ReadonlyArray<Passkey>, StoreUnavailableError>
    readonly countOf: (userId: UserId) => Effect.Effect<number, StoreUnavailableError>
    /** The user's credentials as a browser is told of them (excludeCredentials, allowCredentials), oldest first. */
    readonly credentialsOf: (userId: UserId) => Effect.Effect<ReadonlyArray<CredentialRef>, StoreUnavailableError>
    /**
     * Deletes the passkey only if it belongs to `userId`; true when it did. Another user's
     * passkey is left as it is, and answered exactly like an unknown one.
     */
    readonly deleteOfUser: (userId: UserId, id: PasskeyId) => Effect.Effect<boolean, StoreUnavailableError>
    /**
     * Compare-and-swap of the sign count: sets it to `reported` and `last_used_at` to `usedAt`
     * only if the stored count is still `expected`; true when it did. Of any number of
     * concurrent calls with one `expected`, at most one returns true.
     */
    readonly advanceSignCount: (
      id: PasskeyId,
      expected: number,
      reported: number,
      usedAt: DateTime.Utc
    ) => Effect.Effect<boolean, StoreUnavailableError>
    /** Records a sign-in with a passkey that keeps no counter (it reports 0): `last_used_at` only. */
    readonly touch: (id: PasskeyId, usedAt: DateTime.Utc) => Effect.Effect<void, StoreUnavailableError>
  }
>() {}
