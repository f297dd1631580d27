import { SqlError } from "@effect/sql/SqlError"
import type { Statement } from "@effect/sql/Statement"
import type Database from "better-sqlite3"
import { Effect } from "effect"

export type Rows = ReadonlyArray<Readonly<Record<string, unknown>>>

/** A statement's values, as its builder takes them. */
export type Values<B> = B extends (...values: infer V) => Statement<object> ? V : never

/** A plain adapter's statement builder. */
export type Builder = (...values: never) => Statement<object>

/**
 * A statement of a plain adapter's, compiled once by the client (and so for its dialect): its
 * text, and how a call's values are bound where the compilation put them (found by compiling it
 * with a marker for each of the builder's parameters).
 */
export const compiled = <B extends Builder>(build: B) => {
  const arity = build.length
  const markers = Array.from({ length: arity }, (_, index) => `\u0000value:${index}`)
  // The builder is called with markers in place of its values, whatever their types: only the
  // compiled text and where each marker landed are read.
  const [text, params] = (Reflect.apply(build, undefined, markers) as Statement<object>).compile()
  const places = params.map((param) => markers.indexOf(param as string))
  if (places.length !== arity || places.some((place) => place < 0) || new Set(places).size !== arity) {
    throw new Error("every value must be bound as a parameter exactly once")
  }
  return { text, bound: (values: Values<B>): Array<unknown> => places.map((place) => values[place]) }
}

/**
 * A statement of a plain adapter's, compiled once for SQLite and prepared on `db`: a call runs
 * it at once, one synchronous call of the driver. `all` answers the rows (a SELECT, a
 * RETURNING), `run` answers nothing.
 */
export const prepared = <B extends Builder>(db: Database.Database, build: B) => {
  const { text, bound } = compiled(build)
  const statement = db.prepare(text)
  return {
    all: (...values: Values<B>): Rows => statement.all(...bound(values)) as Rows,
    run: (...values: Values<B>): void => {
      statement.run(...bound(values))
    }
  }
}

/** A driver's call whose outcome is decided at once: a throw is a SqlError, as the client's would be. */
export const attempt = <A, E>(call: () => Effect.Effect<A, E>): Effect.Effect<A, E | SqlError> => {
  try {
    return call()
  } catch (cause) {
    return Effect.fail(new SqlError({ cause, message: "Failed to execute statement" }))
  }
}
