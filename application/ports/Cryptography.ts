import { Context, type Effect, type Option } from "effect"

/** The cryptographic primitives use cases need, keyed from SECRET_KEY where they need a key. */
export class Cryptography extends Context.Tag("app/Cryptography")<
  Cryptography,
  {
    /** SHA-256 of a token, hex: what is stored in place of the token. */
    readonly digest: (token: string) => string
    /** The S256 challenge of a PKCE code verifier: its SHA-256, base64url (RFC 7636 §4.2). */
    readonly s256: (verifier: string) => string
    /** A random identifier from a cryptographic source (UUID v4). */
    readonly randomId: Effect.Effect<string>
    /** 256 random bits from a cryptographic source, base64url: a secret a client keeps. */
    readonly randomSecret: Effect.Effect<string>
    /** `length` decimal digits, each uniform, from a cryptographic source: a code a reader types. */
    readonly randomDigits: (length: number) => Effect.Effect<string>
    /**
     * HMAC-SHA256 of `message` under a key for `use` alone, derived from SECRET_KEY; base64url
     * (43 characters). The same message gives the same value for the same use and key.
     */
    readonly mac: (use: string, message: string) => string
    /** Authenticated encryption of a short secret for storage at rest. */
    readonly seal: (plaintext: string) => Effect.Effect<string>
    /** The plaintext, or none when the box was tampered with or sealed under another key. */
    readonly open: (sealed: string) => Option.Option<string>
  }
>() {}
