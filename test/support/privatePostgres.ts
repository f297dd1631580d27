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

/** The fields of /proc/`pid`/stat after the command name, or undefined once the process is gone. */
const statOf = (pid: number) => {
  try {
    // The command name is in parentheses and may hold spaces: the fields after it are plain.
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8")
    return stat.slice(stat.lastIndexOf(")") + 2).split(" ")
  } catch {
    // Ended, and reaped.
    return undefined
  }
}

/** When `pid` started, which tells it from a later process given the same number. */
const startTime = (pid: number) => statOf(pid)?.[19]

/** Dead, not reaped yet. */
const isZombie = (pid: number) => statOf(pid)?.[0] === "Z"

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

/** The processes whose parent is `pid`, from /proc. */
const childrenOf = (pid: number) =>
  readdirSync("/proc")
    .filter((entry) => /^\d+$/.test(entry))
    .filter((entry) => Number(statOf(Number(entry))?.[1]) === pid)
    .map(Number)

export interface PrivatePostgres {
  readonly url: string
  readonly start: () => Promise<void>
  /** `pg_ctl stop -m fast`: open connections are ended, the data is kept. */
  readonly stop: () => Promise<void>
  /** SIGSTOP to the postmaster, then to its backends: everything it holds hangs, nothing fails. */
  readonly freeze: () => void
  /** SIGCONT to every process `freeze` stopped. */
  readonly thaw: () => void
  /**
   * SIGKILL to the postmaster and every backend, as a crash would end them: what is not in the
   * files yet (the log's buffers in shared memory) is lost; `start` then recovers from the log.
   */
  readonly crash: () => Promise<void>
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
  const crash = async () => {
    const postmaster = Number(readFileSync(join(data, "postmaster.pid"), "utf8").split("\n")[0])
    // Stopped first, it forks no backend that would escape the kill, and reaps none of those that
    // end meanwhile (the service's connections close as it dies): each one named is there to kill.
    process.kill(postmaster, "SIGSTOP")
    const all = [postmaster, ...childrenOf(postmaster)].map((pid) => ({ pid, started: startTime(pid) }))
    for (const { pid } of all) process.kill(pid, "SIGKILL")
    // Until each has exited (a zombie, or reaped), one may still hold the shared memory, which the
    // next postmaster would refuse to start beside.
    const running = () => all.filter(({ pid, started }) => startTime(pid) === started && !isZombie(pid))
    const deadline = Date.now() + 10_000
    while (running().length > 0) {
      const pids = running().map(({ pid }) => pid)
      if (Date.now() > deadline) throw new Error(`outlived SIGKILL: ${pids.join(", ")}`)
      await sleep(20)
    }
    // The postmaster's parent is init (pg_ctl left it), which reaps it when it gets to it, or never.
    // Until then its zombie answers kill(pid, 0), so the next postmaster would take postmaster.pid
    // and the socket's lock for a live server's and not start. They are stale: the process they
    // name is dead, and none of its backends holds the shared memory (which the next postmaster
    // checks by itself, from the data directory, and recycles). The data directory says it was not
    // shut down, and the next start recovers from the log.
    if (startTime(postmaster) === all[0]?.started) {
      rmSync(join(data, "postmaster.pid"), { force: true })
      rmSync(join(folder, `.s.PGSQL.${port}.lock`), { force: true })
    }
  }
  const remove = async () => {
    thaw()
    await stop().catch(() => undefined)
    rmSync(folder, { recursive: true, force: true })
  }

  await start()
  return { url: `postgres://postgres@127.0.0.1:${port}/postgres`, start, stop, freeze, thaw, crash, remove }
}
