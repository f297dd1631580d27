import { Readable } from "node:stream"
import * as Terminal from "@effect/platform/Terminal"
import { NodeFileSystem, NodePath } from "@effect/platform-node"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Exit, Layer, Mailbox, Option, Redacted } from "effect"
import { Invocation } from "../../interfaces/cli/invocation.js"
import { promptPassword, readPassword } from "../../interfaces/cli/password.js"
import { testInvocation } from "../support/cliRun.js"

/** A terminal whose user types `typed` (Enter after each line) and whose screen is recorded. */
const fakeTerminal = (typed: ReadonlyArray<string>) => {
  const screen: Array<string> = []
  const keys = typed.flatMap((line) => [
    ...[...line].map((char) => ({
      input: Option.some(char),
      key: { name: char, ctrl: false, meta: false, shift: false }
    })),
    { input: Option.none(), key: { name: "enter", ctrl: false, meta: false, shift: false } }
  ])
  const layer = Layer.succeed(
    Terminal.Terminal,
    Terminal.Terminal.of({
      columns: Effect.succeed(80),
      rows: Effect.succeed(24),
      isTTY: Effect.succeed(true),
      readLine: Effect.succeed(""),
      display: (text) => Effect.sync(() => void screen.push(text)),
      // Each prompt reads its own keys, as from one keyboard.
      readInput: Effect.gen(function* () {
        const mailbox = yield* Mailbox.make<Terminal.UserInput>()
        const line = keys.splice(0, keys.findIndex((key) => key.key.name === "enter") + 1)
        yield* mailbox.offerAll(line)
        return mailbox
      })
    })
  )
  return { layer: Layer.mergeAll(layer, NodeFileSystem.layer, NodePath.layer), screen: () => screen.join("") }
}

const secret = "Tr0ub4dour&3-horse"
const noTerminal = fakeTerminal([]).layer

describe("the password prompt", () => {
  it.effect("shows nothing of what is typed, not even its length, and answers it when typed twice alike", () =>
    Effect.gen(function* () {
      const terminal = fakeTerminal([secret, secret])
      const password = yield* promptPassword.pipe(Effect.provide(terminal.layer))
      expect(Redacted.value(password)).toBe(secret)
      expect(terminal.screen()).toContain("New password")
      expect(terminal.screen()).toContain("Repeat the new password")
      for (let at = 0; at + 3 <= secret.length; at++) expect(terminal.screen()).not.toContain(secret.slice(at, at + 3))
      expect(terminal.screen()).not.toContain(secret)
      expect(terminal.screen()).not.toContain("*".repeat(secret.length))
    })
  )

  it.effect("refuses two different entries, changing nothing", () =>
    Effect.gen(function* () {
      const exit = yield* Effect.exit(promptPassword.pipe(Effect.provide(fakeTerminal([secret, `${secret}!`]).layer)))
      expect(exit).toStrictEqual(
        Exit.fail(expect.objectContaining({ lines: ["The two passwords differ; nothing changed."] }))
      )
    })
  )
})

/** The invocation's standard input at a terminal (a person to prompt) or not. */
const stdinAt = (isTTY: boolean) =>
  Effect.provideService(Invocation, {
    ...testInvocation().invocation,
    stdin: Object.assign(Readable.from([]), { isTTY })
  })

describe("readPassword", () => {
  const none = { password: Option.none<Redacted.Redacted<string>>(), passwordStdin: false }

  it.effect("refuses to prompt without a terminal, saying how else to give the password", () =>
    Effect.gen(function* () {
      const exit = yield* Effect.exit(readPassword(none).pipe(Effect.provide(noTerminal), stdinAt(false)))
      expect(exit).toStrictEqual(
        Exit.fail(expect.objectContaining({ lines: [expect.stringContaining("--password-stdin")] }))
      )
    })
  )

  it.effect("takes --password as given, and refuses it beside --password-stdin", () =>
    Effect.gen(function* () {
      const given = Option.some(Redacted.make(secret))
      const taken = yield* readPassword({ password: given, passwordStdin: false }).pipe(
        Effect.provide(noTerminal),
        stdinAt(false)
      )
      expect(Redacted.value(taken)).toBe(secret)
      const both = yield* Effect.exit(
        readPassword({ password: given, passwordStdin: true }).pipe(Effect.provide(noTerminal), stdinAt(true))
      )
      expect(Exit.isFailure(both)).toBe(true)
    })
  )
})
