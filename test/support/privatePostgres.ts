import { execFile } from "node:child_process"
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { promisify } from "node:util"
import { freePort } from "./processes.js"

const binaries = "/usr/lib/postgresql/15/bin"

/**
 * Where a private cluster can be made: where the PostgreSQL suites run (TEST_DATABASE_URL set, so
 * the server binaries are installed), as root, which may act as the postgres user.
 */
export const privatePostgresPossible = process.env.TEST_DATABASE_URL !== undefined && process.getuid?.() === 0

const run = promisify(execFile)

/** Runs a server binary as the postgres user; asynchronous, so that load keeps running meanwhile. */
const asPostgres = (command: string, args: ReadonlyArray<string>) =>
  run("runuser", ["-u", "postgres", "--", join(binaries, command), ...args], { timeout: 60_000 })

/** The processes whose parent is `pid`, from /proc. */
const childrenOf = (pid: number) =>
  readdirSync("/proc")
    .filter((entry) => /^\d+$/.test(entry))
    .flatMap((entry) => {
      try {
        // The command name is in parentheses and may hold spaces: the fields after it are plain.
        const stat = readFileSync(`/proc/${entry}/stat`, "utf8")
        const parent = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1])
        return parent === pid ? [Number(entry)] : []
      } catch {
        // Ended while being read.
        return []
      }
    })

export interface PrivatePostgres {
  readonly url: string
  readonly start: () => Promise<void>
  /** `pg_ctl stop -m fast`: open connections are ended, the data is kept. */
  readonly stop: () => Promise<void>
  /** SIGSTOP to the postmaster, then to its backends: everything it holds hangs, nothing fails. */
  readonly freeze: () => void
  /** SIGCONT to every process `freeze` stopped. */
  readonly thaw: () => void
  /** Thaws, stops and deletes the cluster. */
  readonly remove: () => Promise<void>
}

/** A fresh cluster (initdb, trust) of the test's own on a spare port, started. */
export const privatePostgres = async (): Promise<PrivatePostgres> => {
  const folder = mkdtempSync(join(tmpdir(), "portcullis-pg-"))
  const data = join(folder, "data")
  await run("chown", ["postgres", folder])
  await asPostgres("initdb", ["-D", data, "-A", "trust", "-U", "postgres"])
  const port = await freePort()
  let frozen: Array<number> = []

  const start = async () => {
    await asPostgres("pg_ctl", [
      "-D",
      data,
      "-o",
      `-p ${port} -k ${folder} -c listen_addresses=127.0.0.1`,
      "-l",
      join(folder, "log"),
      "-w",
      "start"
    ])
  }
  const stop = async () => {
    await asPostgres("pg_ctl", ["-D", data, "-m", "fast", "-w", "stop"])
  }
  const freeze = () => {
    const postmaster = Number(readFileSync(join(data, "postmaster.pid"), "utf8").split("\n")[0])
    // The postmaster first, so that it forks no backend that would escape the freeze.
    process.kill(postmaster, "SIGSTOP")
    frozen = [postmaster, ...childrenOf(postmaster)]
    for (const pid of frozen.slice(1)) process.kill(pid, "SIGSTOP")
  }
  const thaw = () => {
    for (const pid of frozen.reverse()) {
      try {
        process.kill(pid, "SIGCONT")
      } catch {
        // Already gone.
      }
    }
    frozen = []
  }
  const remove = async () => {
    thaw()
    await stop().catch(() => undefined)
    rmSync(folder, { recursive: true, force: true })
  }

  await start()
  return { url: `postgres://postgres@127.0.0.1:${port}/postgres`, start, stop, freeze, thaw, remove }
}
