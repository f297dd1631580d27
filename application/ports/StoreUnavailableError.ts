import { Schema } from "effect"

/**
 * A store the request needs (database, cache) did not answer. Requests fail with it instead of
 * crashing, and succeed again once the store is back.
 */
export class StoreUnavailableError extends Schema.TaggedError<StoreUnavailableError>()("StoreUnavailableError", {
  store: Schema.String
}) {}
