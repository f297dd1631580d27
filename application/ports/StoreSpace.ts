import { Context, type Effect, type Option } from "effect"
import type { StoreUnavailableError } from "./StoreUnavailableError.js"

/** How much of its free room a store gives back to the file system. */
export type Reclaim =
  /** What SQLite's auto_vacuum=INCREMENTAL allows, at little cost: after every sweep. */
  | "incremental"
  /** The whole file rewritten (VACUUM), which also turns auto_vacuum on in an older file: once, by an operator. */
  | "full"

/**
 * The room deleted rows leave in a store that keeps its own file (SQLite): without it, a file
 * only grows. PostgreSQL's autovacuum and a database in memory need nothing.
 */
export class StoreSpace extends Context.Tag("app/StoreSpace")<
  StoreSpace,
  {
    /** Gives free pages back; answers the file's size in bytes before and after, none for a store without a file. */
    readonly reclaim: (
      mode: Reclaim
    ) => Effect.Effect<Option.Option<{ readonly before: number; readonly after: number }>, StoreUnavailableError>
  }
>() {}
