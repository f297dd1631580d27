import { stripVTControlCharacters } from "node:util"
import { Command } from "@effect/cli"
import { Console, Effect, HashMap } from "effect"
import type { NonEmptyReadonlyArray } from "effect/Array"
import { ownHelp } from "./helpText.js"
import { Invocation } from "./invocation.js"

/** Colour only for a person at a terminal who has not asked for none (https://no-color.org). */
export const wantsColor = (stream: { readonly isTTY?: boolean }, env: Readonly<Record<string, string | undefined>>) =>
  stream.isTTY === true && (env.NO_COLOR ?? "") === ""

const plain = (color: boolean) => (args: ReadonlyArray<unknown>) =>
  color ? args : args.map((arg) => (typeof arg === "string" ? stripVTControlCharacters(arg) : arg))

/**
 * @effect/cli renders help and its parse errors with ANSI styles whatever the output is; this
 * console drops them from what goes to a pipe, a file or a NO_COLOR terminal.
 */
export const withColorWhereWanted = <A, E, R>(self: Effect.Effect<A, E, R>) =>
  Effect.flatMap(Invocation, ({ stdout, stderr, env }) =>
    Console.consoleWith((console) => {
      const out = plain(wantsColor(stdout, env))
      const err = plain(wantsColor(stderr, env))
      return Console.withConsole(self, {
        ...console,
        log: (...args) => console.log(...out(args)),
        error: (...args) => console.error(...err(args))
      })
    })
  )

const isHelp = (text: string) => /^USAGE$/m.test(stripVTControlCharacters(text))

/** Help printed in this CLI's own words only (see ownHelp); what commands print passes as it is. */
export const withOwnHelp = <A, E, R>(self: Effect.Effect<A, E, R>) =>
  Console.consoleWith((console) =>
    Console.withConsole(self, {
      ...console,
      log: (...args) => console.log(...args.map((arg) => (typeof arg === "string" && isHelp(arg) ? ownHelp(arg) : arg)))
    })
  )

// biome-ignore lint/suspicious/noExplicitAny: the bound @effect/cli puts on subcommands (Command.withSubcommands)
type AnyCommand = Command.Command<any, any, any, any>

/** The subcommand names of each command group, by the group's name (names are unique in this CLI). */
const groups = new Map<string, ReadonlyArray<string>>()

/** A command made of subcommands, known to `withHelpAtEveryLevel` below the top level. */
export const group = <Name extends string, const Subcommands extends NonEmptyReadonlyArray<AnyCommand>>(
  name: Name,
  subcommands: Subcommands
) => {
  groups.set(
    name,
    subcommands.flatMap((subcommand) => [...Command.getNames(subcommand)])
  )
  return Command.make(name).pipe(Command.withSubcommands(subcommands))
}

/**
 * Subcommands under a command that does something of its own (`audit`, then `audit export`),
 * known to `withHelpAtEveryLevel` as a group's are.
 */
export const withSubcommandsKnown = <
  Name extends string,
  R,
  E,
  A,
  const Subcommands extends NonEmptyReadonlyArray<AnyCommand>
>(
  parent: Command.Command<Name, R, E, A>,
  subcommands: Subcommands
) => {
  for (const name of Command.getNames(parent)) {
    groups.set(
      name,
      subcommands.flatMap((subcommand) => [...Command.getNames(subcommand)])
    )
  }
  return parent.pipe(Command.withSubcommands(subcommands))
}

const helpFlags = new Set(["--help", "-h"])

const helpAtEveryLevel = (children: ReadonlyArray<string>, args: ReadonlyArray<string>): ReadonlyArray<string> => {
  const at = args.findIndex((arg) => children.includes(arg))
  const child = args[at]
  if (child === undefined || !args.slice(at).some((arg) => helpFlags.has(arg))) return args
  const own = args.slice(0, at)
  return [
    ...own,
    ...(own.some((arg) => helpFlags.has(arg)) ? [] : ["--help"]),
    child,
    ...helpAtEveryLevel(groups.get(child) ?? [], args.slice(at + 1))
  ]
}

/**
 * @effect/cli 0.77 shows a subcommand's usage without the commands above it (`$ update …` for
 * `portcullis user update --help`) unless each group on the way is asked for help as well, so a
 * help request is repeated before every subcommand name on the path. `args` come after the
 * executable's.
 */
export const withHelpAtEveryLevel = (root: AnyCommand, args: ReadonlyArray<string>) =>
  helpAtEveryLevel([...HashMap.keys(Command.getSubcommands(root))], args)
