import { Context, type DateTime, type Effect, type Option } from "effect"
import type { AddressChangeUndo, ChangeLink, PendingAddressChange } from "../../domain/AddressChange.js"
import type { UserId } from "../../domain/User.js"
import type { StoreUnavailableError } from "./StoreUnavailableError.js"

/**
 * Address changes (domain/AddressChange.ts): at most one pending change per user, and the undos
 * of changes made, whose old addresses stay reserved while they last (UserRepo refuses a reserved
 * address to anyone but its account). Each operation is one atomic step of the store.
 */
export class AddressChanges extends Context.Tag("app/AddressChanges")<
  AddressChanges,
  {
    /** Stores the user's pending change in place of any earlier one, which is void from then on. */
    readonly replace: (pending: PendingAddressChange) => Effect.Effect<void, StoreUnavailableError>
    /** The pending change one of whose links has this digest, and which link it is. */
    readonly findByToken: (
      tokenDigest: string
    ) => Effect.Effect<
      Option.Option<{ readonly pending: PendingAddressChange; readonly link: ChangeLink }>,
      StoreUnavailableError
    >
    /**
     * Counts the link of this digest as used; answers the change as stored after, none when no
     * pending change has the link any more (replaced, made or void). Of two links used at once,
     * the later one sees the earlier.
     */
    readonly markUsed: (
      tokenDigest: string
    ) => Effect.Effect<Option.Option<PendingAddressChange>, StoreUnavailableError>
    /** Takes (deletes) the user's pending change if it still has the new link of this digest; whether it did. */
    readonly take: (userId: UserId, newTokenDigest: string) => Effect.Effect<boolean, StoreUnavailableError>
    /** Deletes the user's pending change, if any (void). */
    readonly remove: (userId: UserId) => Effect.Effect<void, StoreUnavailableError>
    /** The account a live undo reserves the address for, if one does. */
    readonly reservedFor: (
      email: string,
      now: DateTime.Utc
    ) => Effect.Effect<Option.Option<UserId>, StoreUnavailableError>
    /** Stores the undo of a change made. */
    readonly putUndo: (undo: AddressChangeUndo) => Effect.Effect<void, StoreUnavailableError>
    /** The undo of this token digest, live or not. */
    readonly findUndo: (tokenDigest: string) => Effect.Effect<Option.Option<AddressChangeUndo>, StoreUnavailableError>
    /**
     * Takes (deletes) every undo of the user, answering whether the one of this digest was among
     * them: an undo used ends the others, and of two uses at once one takes it.
     */
    readonly takeUndos: (userId: UserId, tokenDigest: string) => Effect.Effect<boolean, StoreUnavailableError>
    /** How many pending changes and undos expired before `before` (a dry run of the sweep). */
    readonly countExpired: (before: DateTime.Utc) => Effect.Effect<number, StoreUnavailableError>
    /** Deletes at most `limit` pending changes and undos that expired before `before`; answers how many. */
    readonly deleteExpired: (before: DateTime.Utc, limit: number) => Effect.Effect<number, StoreUnavailableError>
  }
>() {}
