import { spawn } from "node:child_process"
import { Readable, Writable } from "node:stream"
import * as NodeContext from "@effect/platform-node/NodeContext"
import { Cause, type Context, Effect, Exit, Option } from "effect"
import { Invocation } from "../../interfaces/cli/invocation.js"
import { program } from "../../interfaces/cli/program.js"
import * as Host from "../../main/host.js"
import { cleanEnv, cli, root } from "./processes.js"

export interface Run {
  readonly status: number | null
  readonly signal: NodeJS.Signals | null
  readonly stdout: string
  readonly stderr: string
  readonly elapsedMs: number
}

export interface RunOptions {
  readonly cwd?: string
  /** The whole environment; this process's own without it. */
  readonly env?: NodeJS.ProcessEnv
  /** Standard input; without it the process reads an empty one (never a terminal). */
  readonly input?: string
  readonly timeout?: number
}

/**
 * Runs a process to completion; one still running after `timeout` ms is killed and reported.
 * Never synchronous: a test worker blocked for long misses vitest's RPC deadline ("Timeout calling
 * onTaskUpdate"), and a CLI run takes seconds on a busy machine.
 */
export const runProcess = (command: string, args: ReadonlyArray<string>, options: RunOptions = {}): Promise<Run> =>
  new Promise((resolve, reject) => {
    const started = Date.now()
    const timeout = options.timeout ?? 20_000
    const child = spawn(command, args, {
      ...(options.cwd === undefined ? {} : { cwd: options.cwd }),
      ...(options.env === undefined ? {} : { env: options.env }),
      stdio: "pipe"
    })
    let stdout = ""
    let stderr = ""
    child.stdout.setEncoding("utf8").on("data", (chunk: string) => {
      stdout += chunk
    })
    child.stderr.setEncoding("utf8").on("data", (chunk: string) => {
      stderr += chunk
    })
    // A process that exits before reading its input closes the pipe; that is its answer, not a failure to run.
    child.stdin.on("error", () => undefined)
    child.stdin.end(options.input)
    let timedOut = false
    const timer = setTimeout(() => {
      timedOut = true
      child.kill("SIGKILL")
    }, timeout)
    const failed = (reason: string) => new Error(`${[command, ...args].join(" ")} failed to run: ${reason}\n${stderr}`)
    child.once("error", (error) => {
      clearTimeout(timer)
      reject(failed(error.message))
    })
    child.once("close", (status, signal) => {
      clearTimeout(timer)
      if (timedOut) reject(failed(`still running after ${timeout} ms, killed`))
      else resolve({ status, signal, stdout, stderr, elapsedMs: Date.now() - started })
    })
  })

export type CliRunOptions = Omit<RunOptions, "env">

/** Runs the built CLI with only `vars` (and PATH, HOME) in its environment, in the repository unless told. */
export const runCli = (
  args: ReadonlyArray<string>,
  vars: Readonly<Record<string, string>>,
  options: CliRunOptions = {}
): Promise<Run> => runProcess(process.execPath, [cli, ...args], { cwd: root, ...options, env: cleanEnv(vars) })

/** The non-blank lines of an output. */
export const lines = (text: string) => text.split("\n").filter((line) => line.trim() !== "")

/** A stream that keeps what is written to it. */
const recording = () => {
  let text = ""
  const stream = new Writable({
    write(chunk: Buffer | string, _encoding, done) {
      text += chunk.toString()
      done()
    }
  })
  return { stream, text: () => text }
}

/**
 * An invocation as a process without a terminal gets it: `vars` (over cleanEnv's) as its
 * environment, `input` as standard input, standard output and error recorded.
 */
export const testInvocation = (vars: Readonly<Record<string, string>> = {}, input = "") => {
  const stdout = recording()
  const stderr = recording()
  let status = 0
  const invocation: Context.Tag.Service<Invocation> = {
    env: cleanEnv(vars),
    stdin: Readable.from(input === "" ? [] : [Buffer.from(input)]),
    stdout: stdout.stream,
    stderr: stderr.stream,
    setExitCode: (code) => {
      status = code
    }
  }
  return { invocation, stdout: stdout.text, stderr: stderr.text, status: () => status }
}

export type InProcessOptions = Omit<CliRunOptions, "cwd">

/**
 * The CLI's program run in this process, as `runCli` runs it in its own: the same command line,
 * environment (`vars` and cleanEnv's), standard input and answer (status, stdout, stderr), over
 * the sources rather than the build. For the operator commands, whose work is the stores' and
 * not the process's: what only a process shows (signals, start-up, colour at a terminal, the
 * modules it loads, serving) is runCli's. A defect is told on stderr with status 1, as the
 * runtime of main/cli.ts tells it. There is no working directory of its own: give a
 * SERVICE_DATABASE_URL to every command that opens the stores.
 */
export const runCliInProcess = async (
  args: ReadonlyArray<string>,
  vars: Readonly<Record<string, string>>,
  options: InProcessOptions = {}
): Promise<Run> => {
  const started = Date.now()
  const timeout = options.timeout ?? 20_000
  const { invocation, stdout, stderr, status } = testInvocation(vars, options.input)
  const exit = await Effect.runPromiseExit(
    program(["node", "portcullis", ...args]).pipe(
      Effect.provide(Host.layer),
      Effect.provideService(Invocation, invocation),
      Effect.provide(NodeContext.layer),
      Effect.timeoutFail({
        duration: timeout,
        onTimeout: () => new Error(`portcullis ${args.join(" ")} still running after ${timeout} ms`)
      })
    )
  )
  if (Exit.isFailure(exit)) {
    const timedOut = Cause.failureOption(exit.cause)
    if (Option.isSome(timedOut)) throw timedOut.value
    invocation.stderr.write(`${Cause.pretty(exit.cause)}\n`)
    invocation.setExitCode(1)
  }
  return { status: status(), signal: null, stdout: stdout(), stderr: stderr(), elapsedMs: Date.now() - started }
}
