import { Options, Prompt } from "@effect/cli"
import { Effect, Option, Redacted } from "effect"
import { Invocation } from "./invocation.js"
import { StartupError } from "./startup.js"

/** Where a command's new password comes from; with neither option, a hidden prompt. */
export const passwordOptions = {
  password: Options.redacted("password").pipe(
    Options.withPseudoName("PASSWORD"),
    Options.optional,
    Options.withDescription(
      "The password. It shows in the process list and the shell history: prefer the prompt, or --password-stdin in scripts."
    )
  ),
  passwordStdin: Options.boolean("password-stdin").pipe(
    Options.withDescription(
      "Read the password from standard input (its first line), for scripts: printf '%s\\n' \"$PASSWORD\" | portcullis …"
    )
  )
}

/** The first line of standard input, without its line ending. */
const firstLineOfStdin = Effect.flatMap(Invocation, ({ stdin }) =>
  Effect.promise(async () => {
    const chunks: Array<Buffer> = []
    for await (const chunk of stdin) chunks.push(Buffer.from(chunk))
    return Buffer.concat(chunks).toString("utf8").split(/\r?\n/, 1)[0] ?? ""
  })
)

const refuse = (line: string) => new StartupError({ lines: [line] })

/**
 * Asks twice, showing nothing as it is typed, not even its length; the two must match. Ctrl+C
 * ends the command.
 */
export const promptPassword = Effect.gen(function* () {
  const first = yield* Prompt.run(Prompt.hidden({ message: "New password" }))
  const again = yield* Prompt.run(Prompt.hidden({ message: "Repeat the new password" }))
  if (Redacted.value(first) !== Redacted.value(again))
    return yield* refuse("The two passwords differ; nothing changed.")
  return first
}).pipe(Effect.catchTag("QuitException", () => Effect.fail(refuse("Cancelled; nothing changed."))))

/**
 * The password of `passwordOptions`. A prompt needs a terminal on standard input: without one
 * the command stops, saying how else to give the password, rather than wait on a pipe.
 */
export const readPassword = (given: {
  readonly password: Option.Option<Redacted.Redacted<string>>
  readonly passwordStdin: boolean
}) => Effect.flatMap(Invocation, ({ stdin }) => passwordFrom(given, stdin.isTTY === true))

const passwordFrom = (
  given: { readonly password: Option.Option<Redacted.Redacted<string>>; readonly passwordStdin: boolean },
  interactive: boolean
): Effect.Effect<Redacted.Redacted<string>, StartupError, Prompt.Prompt.Environment | Invocation> => {
  if (Option.isSome(given.password) && given.passwordStdin) {
    return Effect.fail(refuse("--password and --password-stdin are two ways to give one password; use one."))
  }
  if (Option.isSome(given.password)) return Effect.succeed(given.password.value)
  if (given.passwordStdin) return Effect.map(firstLineOfStdin, Redacted.make)
  if (!interactive) {
    return Effect.fail(
      refuse("No terminal to ask for the password on: pipe it with --password-stdin, or run the command in a terminal.")
    )
  }
  return promptPassword
}
