/**
 * The constructor option for a domain class built from values that are already of its fields'
 * types: a row its own schema has just decoded, or values the use case has just made. Checking
 * them again would only cost, and the cost is not small: Effect 3 rebuilds the validating parser
 * on every construction of a class whose fields transform (DateTimeUtc, OptionFromNullOr), which
 * showed in every sign-in and refresh. Input from outside is decoded at the edge, never built so.
 */
export const validated = { disableValidation: true } as const
