import { SqlError } from "@effect/sql/SqlError"
import Database from "better-sqlite3"
import { Context, Effect, Layer, type Scope } from "effect"

/** How a fast adapter opens the file: to read only, or to write with durable commits. */
export type Access = "reading" | "writing"

/** A connection to a file the client has made and migrated, on the client's terms (its waits, and FULL sync for writes). */
export const open = (filename: string, access: Access): Database.Database => {
  const db = new Database(filename, { readonly: access === "reading", fileMustExist: true })
  // A lock held elsewhere (another process's write, the log being recovered) is waited for as the client waits.
  db.pragma("busy_timeout = 5000")
  if (access === "writing") {
    db.pragma("synchronous = FULL")
    db.pragma("foreign_keys = ON")
  }
  return db
}

/** A connection of a fast adapter's own, closed with its layer's scope. */
export const connection = (filename: string, access: Access): Effect.Effect<Database.Database, SqlError, Scope.Scope> =>
  Effect.acquireRelease(
    Effect.try({
      try: () => open(filename, access),
      catch: (cause) => new SqlError({ cause, message: `the ${access} connection cannot open it` })
    }),
    (opened) => Effect.sync(() => opened.close())
  )

/**
 * The one connection that only reads a file, shared by the fast adapters' reads (its reads are
 * synchronous calls, so they never interleave): one page cache and one handle for all of them.
 */
export class ReadingConnection extends Context.Tag("infrastructure/sql/fast/ReadingConnection")<
  ReadingConnection,
  ReadingDatabase
>() {}

/** The reading connection's handle, under a name of this module's (declarations can name it). */
export interface ReadingDatabase extends Database.Database {}

/** The reading connection of `filename`, closed with the layer's scope; built once however many adapters it is given to. */
export const readingConnection = (filename: string) => Layer.scoped(ReadingConnection, connection(filename, "reading"))
