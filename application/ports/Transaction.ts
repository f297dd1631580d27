import { Context, type Effect } from "effect"
import type { StoreUnavailableError } from "./StoreUnavailableError.js"

/**
 * What commits together. A use case runs the writes that must stand or fall as one (a session
 * and its sign-in's entry, a password and the sessions it ends) through `transaction`; every
 * repository call inside joins it, and a nested call joins the outer one. Only a few writes of
 * the database belong in one, nothing slow (no hashing): it holds a connection, and SQLite's one
 * write lock. Every store keeps the same promise: all or nothing, one at a time on SQLite (the
 * memory store is SQLite in memory), isolated by PostgreSQL's own rules there.
 */
export class Transaction extends Context.Tag("app/Transaction")<
  Transaction,
  {
    readonly transaction: <A, E, R>(effect: Effect.Effect<A, E, R>) => Effect.Effect<A, E | StoreUnavailableError, R>
  }
>() {}
