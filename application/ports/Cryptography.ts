import { Context, type Effect, type Option } from "effect"

/** The cryptographic primitives use cases need, keyed from SECRET_KEY where they need a key. */
export class Cryptography extends Context.Tag("app/Cryptography")<
  Cryptography,
  {
    /** SHA-256 of a token, hex: what is stored in place of the token. */
    readonly digest: (token: string) => string
    /** A random identifier from a cryptographic source (UUID v4). */
    readonly randomId: Effect.Effect<string>
    /** Authenticated encryption of a short secret for storage at rest. */
    readonly seal: (plaintext: string) => Effect.Effect<string>
    /** The plaintext, or none when the box was tampered with or sealed under another key. */
    readonly open: (sealed: string) => Option.Option<string>
  }
>() {}
