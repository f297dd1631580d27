import type { Brand, DateTime, Option, Redacted } from "effect"

/**
 * A decoded (Effect-side) type as it travels in JSON: what the Promise client takes and gives.
 * The API's endpoint types keep only the decoded side of their schemas, so the JSON side is
 * derived from it: DateTime → ISO string, Redacted → its value, Option → value or null, brands
 * dropped. A schema class's methods are no data, so they are left out.
 */
/** Any brand (Email, UserId, FamilyId…): the JSON value is the bare string or number. */
type Branded = { readonly [Brand.BrandTypeId]: unknown }

export type Wire<T> = T extends DateTime.DateTime
  ? string
  : T extends Redacted.Redacted<infer A>
    ? Wire<A>
    : T extends Option.Option<infer A>
      ? Wire<A> | null
      : T extends string & Branded
        ? string
        : T extends number & Branded
          ? number
          : T extends ReadonlyArray<infer A>
            ? ReadonlyArray<Wire<A>>
            : T extends object
              ? { readonly [K in keyof T as T[K] extends (...args: never) => unknown ? never : K]: Wire<T[K]> }
              : T
