import { Context, type Effect, type Option } from "effect"
import type { UserAlreadyExistsError } from "../../domain/errors.js"
import type { Email, RoleName, User, UserId } from "../../domain/User.js"
import type { StoreUnavailableError } from "./StoreUnavailableError.js"

export interface NewUser {
  readonly email: Email
  readonly hashed_password: Option.Option<string>
  readonly is_active: boolean
  readonly is_verified: boolean
  readonly is_superuser: boolean
  /** The deployment's custom fields, in their JSON form; none when absent. */
  readonly fields?: Readonly<Record<string, unknown>>
}

/** A page of users for an operator: those whose email contains `emailContains`, if given. */
export interface UserQuery {
  /** The start of the normalised email address (normaliseEmail), matched literally, through its index. */
  readonly emailStartsWith?: string
  /** A part of the normalised email address, matched literally: it reads every user. */
  readonly emailContains?: string
  /** Only the users after this one, oldest first (created_at, then id): a keyset, never an offset. */
  readonly after?: User
  readonly limit: number
}

/** The flags an operator may change on a user. */
export type UserFlags = Partial<Pick<User, "is_active" | "is_verified" | "is_superuser">>

/** Users, with their roles. The repository chooses the id (USER_ID_TYPE). */
export class UserRepo extends Context.Tag("app/UserRepo")<
  UserRepo,
  {
    /**
     * Fails with UserAlreadyExistsError when the email, or the value of a unique custom field, is
     * taken, atomically: no check-then-insert race. An address reserved by a live undo of an
     * address change (AddressChanges) counts as taken by the account it is reserved for.
     */
    readonly create: (user: NewUser) => Effect.Effect<User, UserAlreadyExistsError | StoreUnavailableError>
    readonly findById: (id: UserId) => Effect.Effect<Option.Option<User>, StoreUnavailableError>
    /** Finds a user by the login field (`email`, or a deployment's field), by exact normalised value. */
    readonly findByLogin: (field: string, value: string) => Effect.Effect<Option.Option<User>, StoreUnavailableError>
    /** The users of the query in a stable order, oldest first (ties by id), so that pages neither overlap nor skip. */
    readonly list: (query: UserQuery) => Effect.Effect<ReadonlyArray<User>, StoreUnavailableError>
    readonly setPassword: (id: UserId, hashedPassword: string) => Effect.Effect<void, StoreUnavailableError>
    /**
     * Moves the user to another address, verified (its proof is what moves it). Fails with
     * UserAlreadyExistsError, changing nothing, when another user holds it or a live undo reserves
     * it for another user, however the race went.
     */
    readonly setEmail: (
      id: UserId,
      email: Email
    ) => Effect.Effect<Option.Option<User>, UserAlreadyExistsError | StoreUnavailableError>
    /** Leaves the user without a password: only its other ways to sign in remain. */
    readonly clearPassword: (id: UserId) => Effect.Effect<void, StoreUnavailableError>
    /**
     * Moves the user's credential version on (domain/WaysIn.ts): a way in changed. With
     * `expected`, only if the version is still that one (compare-and-set). True when it moved;
     * false for an unknown user, or a version moved meanwhile.
     */
    readonly changeCredentials: (id: UserId, expected?: number) => Effect.Effect<boolean, StoreUnavailableError>
    /**
     * Whether the user still exists with credential version `version`. Inside a transaction the
     * answer holds until it ends: a change of the version waits for it (PostgreSQL's row lock,
     * SQLite's one writer), so a session written in the same transaction is either seen by the
     * change, which then ends it, or refused here.
     */
    readonly holdCredentials: (id: UserId, version: number) => Effect.Effect<boolean, StoreUnavailableError>
    /**
     * Sets some of the user's custom fields (JSON form), keeping the others; the updated user, or
     * none when it does not exist. Fails with UserAlreadyExistsError when a unique field's value
     * (the custom login field) belongs to another user; nothing changes then.
     */
    readonly setFields: (
      id: UserId,
      fields: Readonly<Record<string, unknown>>
    ) => Effect.Effect<Option.Option<User>, UserAlreadyExistsError | StoreUnavailableError>
    /** The updated user, or none when it does not exist. */
    readonly setFlags: (id: UserId, flags: UserFlags) => Effect.Effect<Option.Option<User>, StoreUnavailableError>
    /** Deletes the user and its roles. Callers end the user's sessions first (Sessions.endAll). */
    readonly delete: (id: UserId) => Effect.Effect<void, StoreUnavailableError>
    /** Gives the user the role (created on first use); the updated user, or none when it does not exist. */
    readonly assignRole: (id: UserId, role: RoleName) => Effect.Effect<Option.Option<User>, StoreUnavailableError>
    /** Takes the role from the user, if held; the updated user, or none when it does not exist. */
    readonly removeRole: (id: UserId, role: RoleName) => Effect.Effect<Option.Option<User>, StoreUnavailableError>
  }
>() {}
