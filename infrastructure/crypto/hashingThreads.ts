import { createRequire } from "node:module"
import { availableParallelism } from "node:os"
import { Worker } from "node:worker_threads"
import { Effect, Exit, type Scope } from "effect"

/** What a hashing thread is asked to do: argon2id hashes, argon2 and bcrypt verifications. */
export type HashTask =
  | { readonly op: "hash"; readonly password: string; readonly options: object }
  | { readonly op: "verifyArgon2"; readonly hashed: string; readonly password: string }
  | { readonly op: "verifyBcrypt"; readonly hashed: string; readonly password: string }

/**
 * How many threads hash at once in a process: one a core plus two, shared among the processes
 * serving (WORKERS). The threads run at the lowest scheduling priority, so the spare ones never
 * take a core from an event loop; they keep every core busy while an event loop hands the next
 * hash over. More than that only makes the hashes, each holding 19 MiB, fight over memory.
 */
export const hashingThreadCount = (workers = 1, cores = availableParallelism()): number =>
  Math.max(1, Math.ceil((cores + 2) / workers))

/**
 * Each thread lowers its own priority to the lowest (nice 19, Linux: /proc/thread-self names the
 * thread) before it loads the native hashers, whose paths it is given: a thread has no resolution
 * base of its own when the service is installed as a package. Verification failures (a malformed
 * hash) answer false, as a wrong password does.
 */
const source = `
const { parentPort, workerData } = require("node:worker_threads")
let niced = false
try {
  const thread = Number(require("node:fs").readlinkSync("/proc/thread-self").split("/").pop())
  require("node:os").setPriority(thread, 19)
  niced = true
} catch {}
const argon2 = require(workerData.argon2)
const bcrypt = require(workerData.bcrypt)
const refused = (check) => { try { return check() } catch { return false } }
const run = (task) => {
  switch (task.op) {
    case "hash": return argon2.hashSync(task.password, task.options)
    case "verifyArgon2": return refused(() => argon2.verifySync(task.hashed, task.password))
    case "verifyBcrypt": return refused(() => bcrypt.verifySync(task.password, task.hashed))
    case "priority": return niced
  }
}
parentPort.on("message", (task) => parentPort.postMessage(run(task)))
`

const require = createRequire(import.meta.url)
const natives = { argon2: require.resolve("@node-rs/argon2"), bcrypt: require.resolve("@node-rs/bcrypt") }

export interface HashingThreads {
  /** Runs the task on the next free thread, waiting for one when all are busy. Not interruptible: a hash under way holds its thread until it ends. */
  readonly run: (task: HashTask) => Effect.Effect<string | boolean>
  /** Whether every thread runs below the event loop's priority (false where the platform does not allow it); asked when the threads are idle. */
  readonly lowered: Effect.Effect<boolean>
  readonly size: number
}

/** One thread's answer to one message; a thread that fails or exits is replaced, and its task dies. */
const ask = (worker: Worker, message: unknown) =>
  Effect.async<unknown, never>((resume) => {
    const answered = (value: unknown) => {
      settle()
      resume(Effect.succeed(value))
    }
    const failed = (error: unknown) => {
      settle()
      resume(Effect.die(error))
    }
    const exited = (code: number) => failed(new Error(`a hashing thread exited (code ${code})`))
    const settle = () => {
      worker.off("message", answered).off("error", failed).off("exit", exited)
      worker.unref()
    }
    worker.once("message", answered).once("error", failed).once("exit", exited)
    // Referenced while it works, so that a command waiting for a hash is not ended for want of work.
    worker.ref()
    worker.postMessage(message)
  })

/**
 * Password hashing on threads of its own, off libuv's pool (which stays free for name lookups and
 * file operations) and below the event loop's priority: however many sign-ins hash at once, the
 * routes that hash nothing are served first. The threads end with the scope.
 */
export const make = (size = hashingThreadCount()): Effect.Effect<HashingThreads, never, Scope.Scope> =>
  Effect.gen(function* () {
    // A thread that ended while idle (its 'exit' already past) would never answer: it is replaced
    // when next taken. Its error, had nobody listened, would have ended the process.
    const ended = new WeakSet<Worker>()
    const spawn = () => {
      const worker = new Worker(source, { eval: true, workerData: natives })
      worker.on("error", () => {}).once("exit", () => ended.add(worker))
      worker.unref()
      return worker
    }
    const idle = Array.from({ length: size }, spawn)
    const all = [...idle]
    yield* Effect.addFinalizer(() => Effect.promise(() => Promise.all(all.map((thread) => thread.terminate()))))
    const replace = (worker: Worker) => {
      const replacement = spawn()
      all[all.indexOf(worker)] = replacement
      void worker.terminate()
      return replacement
    }
    // Every thread has started and loaded the hashers before the first request: a failure to load
    // them stops start-up instead of the first sign-in.
    yield* Effect.all(
      all.map((worker) => ask(worker, { op: "priority" })),
      { concurrency: "unbounded" }
    )
    const turn = (yield* Effect.makeSemaphore(size)).withPermits(1)
    const use = (message: unknown) =>
      Effect.uninterruptible(
        turn(
          Effect.suspend(() => {
            // A permit guarantees a free thread.
            const taken = idle.pop() as Worker
            const worker = ended.has(taken) ? replace(taken) : taken
            return ask(worker, message).pipe(
              Effect.onExit((exit) =>
                Effect.sync(() => {
                  idle.push(Exit.isSuccess(exit) ? worker : replace(worker))
                })
              )
            )
          })
        )
      )
    return {
      run: (task) => use(task) as Effect.Effect<string | boolean>,
      lowered: Effect.map(
        Effect.all(
          all.map(() => use({ op: "priority" })),
          { concurrency: "unbounded" }
        ),
        (answers) => answers.every((answer) => answer === true)
      ),
      size
    }
  })
