import { spawn } from "node:child_process"
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
