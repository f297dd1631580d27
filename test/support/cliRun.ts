import { spawnSync } from "node:child_process"
import { cleanEnv, cli, root } from "./processes.js"

export interface CliRun {
  readonly status: number | null
  readonly signal: NodeJS.Signals | null
  readonly stdout: string
  readonly stderr: string
  readonly elapsedMs: number
}

export interface CliRunOptions {
  readonly cwd?: string
  /** Standard input; without it the CLI gets none (not a terminal either). */
  readonly input?: string
  readonly timeout?: number
}

/** Runs the built CLI to completion; a process still running after `timeout` ms is killed and reported. */
export const runCli = (
  args: ReadonlyArray<string>,
  vars: Readonly<Record<string, string>>,
  options: CliRunOptions = {}
): CliRun => {
  const started = Date.now()
  const result = spawnSync(process.execPath, [cli, ...args], {
    cwd: options.cwd ?? root,
    env: cleanEnv(vars),
    encoding: "utf8",
    timeout: options.timeout ?? 20_000,
    killSignal: "SIGKILL",
    ...(options.input === undefined ? { stdio: ["ignore", "pipe", "pipe"] } : { input: options.input })
  })
  const run = {
    status: result.status,
    signal: result.signal,
    stdout: result.stdout,
    stderr: result.stderr,
    elapsedMs: Date.now() - started
  }
  if (result.error !== undefined) {
    throw new Error(`portcullis ${args.join(" ")} failed to run: ${result.error.message}\n${run.stderr}`)
  }
  return run
}

/** The non-blank lines of an output. */
export const lines = (text: string) => text.split("\n").filter((line) => line.trim() !== "")
