import { Console as NodeConsole } from "node:console"
import { Console, Context, Effect } from "effect"

/** A standard stream a command writes to; `isTTY` when a person reads it at a terminal. */
export type Output = NodeJS.WritableStream & { readonly isTTY?: boolean }

/**
 * What a command is invoked with, from the process it runs in (main/cli.ts gives the real one):
 * its environment, standard streams and exit status. The commands touch these only through here,
 * so that a test can run them in its own process, with an environment and streams of its own.
 */
export class Invocation extends Context.Tag("cli/Invocation")<
  Invocation,
  {
    /** The environment the settings are read from; a .env file's variables are added to it. */
    readonly env: Record<string, string | undefined>
    readonly stdin: NodeJS.ReadableStream & { readonly isTTY?: boolean }
    readonly stdout: Output
    readonly stderr: Output
    /** The status the process is to end with. */
    readonly setExitCode: (code: number) => void
  }
>() {}

/** Writes `text` to standard output as it is (no line ending added). */
export const writeOut = (text: string) =>
  Effect.flatMap(Invocation, ({ stdout }) => Effect.sync(() => void stdout.write(text)))

/** Each line on standard error, then exit status 1: how a command tells a known failure. */
export const fail = (lines: ReadonlyArray<string>) =>
  Effect.flatMap(Invocation, ({ stderr, setExitCode }) =>
    Effect.sync(() => {
      for (const line of lines) stderr.write(`${line}\n`)
      setExitCode(1)
    })
  )

/** Effect's Console (which @effect/cli prints help and errors with) over the invocation's streams. */
const consoleOf = (stdout: Output, stderr: Output): Console.Console => {
  const unsafe = new NodeConsole({ stdout, stderr })
  const sync =
    <Args extends ReadonlyArray<unknown>>(f: (...args: Args) => void) =>
    (...args: Args) =>
      Effect.sync(() => f(...args))
  return {
    [Console.TypeId]: Console.TypeId,
    assert: sync((condition: boolean, ...args: ReadonlyArray<unknown>) => unsafe.assert(condition, ...args)),
    clear: Effect.sync(() => unsafe.clear()),
    count: sync((label?: string) => unsafe.count(label)),
    countReset: sync((label?: string) => unsafe.countReset(label)),
    debug: sync((...args: ReadonlyArray<unknown>) => unsafe.debug(...args)),
    dir: sync((item: unknown, options?: object) => unsafe.dir(item, options)),
    dirxml: sync((...args: ReadonlyArray<unknown>) => unsafe.dirxml(...args)),
    error: sync((...args: ReadonlyArray<unknown>) => unsafe.error(...args)),
    group: sync((options?: { readonly label?: string | undefined; readonly collapsed?: boolean | undefined }) =>
      options?.collapsed === true ? unsafe.groupCollapsed(options.label) : unsafe.group(options?.label)
    ),
    groupEnd: Effect.sync(() => unsafe.groupEnd()),
    info: sync((...args: ReadonlyArray<unknown>) => unsafe.info(...args)),
    log: sync((...args: ReadonlyArray<unknown>) => unsafe.log(...args)),
    table: sync((data: unknown, properties?: ReadonlyArray<string>) =>
      unsafe.table(data, properties === undefined ? undefined : [...properties])
    ),
    time: sync((label?: string) => unsafe.time(label)),
    timeEnd: sync((label?: string) => unsafe.timeEnd(label)),
    timeLog: sync((label?: string, ...args: ReadonlyArray<unknown>) => unsafe.timeLog(label, ...args)),
    trace: sync((...args: ReadonlyArray<unknown>) => unsafe.trace(...args)),
    warn: sync((...args: ReadonlyArray<unknown>) => unsafe.warn(...args)),
    unsafe
  }
}

/** `self` printing through the invocation's streams. */
export const withInvocationConsole = <A, E, R>(self: Effect.Effect<A, E, R>) =>
  Effect.flatMap(Invocation, ({ stdout, stderr }) => Console.withConsole(self, consoleOf(stdout, stderr)))
