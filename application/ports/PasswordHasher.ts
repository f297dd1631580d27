import { Context, type Effect, type Redacted } from "effect"

/** Password hashing, off the event loop. Hashes are self-describing strings (PHC or bcrypt). */
export class PasswordHasher extends Context.Tag("app/PasswordHasher")<
  PasswordHasher,
  {
    readonly hash: (password: Redacted.Redacted<string>) => Effect.Effect<string>
    /** False for a wrong password and for a hash it cannot read; never fails. */
    readonly verify: (hashed: string, password: Redacted.Redacted<string>) => Effect.Effect<boolean>
    /** True when the hash is not in the configured algorithm and parameters. */
    readonly needsRehash: (hashed: string) => boolean
    /** Spends exactly what a verification costs, for sign-ins that have nothing to verify against. */
    readonly verifyNothing: (password: Redacted.Redacted<string>) => Effect.Effect<void>
  }
>() {}
