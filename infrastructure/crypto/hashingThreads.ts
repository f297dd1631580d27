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
 * How many hashing threads a process has: one a core, shared among the processes serving
 * (WORKERS). A hash is CPU and memory bound (19 MiB each): more hashes at once than cores only
 * makes them fight over the caches and memory bandwidth, so that together they finish fewer
 * hashes a second (BENCHMARKS.md, `argon2id` at 1, 2 and 4 in flight). The cores are kept busy by
 * each thread holding its next task (TASKS_A_THREAD), not by more threads.
 */
export const hashingThreadCount = (workers = 1, cores = availableParallelism()): number =>
  Math.max(1, Math.ceil(cores / workers))

/**
 * Tasks given to a thread at once: the one it runs and the next, already in its queue, which it
 * starts the moment the first ends instead of waiting for the event loop to hand it over.
 */
export const TASKS_A_THREAD = 2

/**
 * Each thread lowers its own priority to the lowest (nice 19, Linux: /proc/thread-self names the
 * thread) before it loads the native hashers, whose paths it is given: a thread has no resolution
 * base of its own when the service is installed as a package. Verification failures (a malformed
 * hash) answer false, as a wrong password does; any other failure of a task is answered as the
 * task's, and the thread goes on to the next.
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
parentPort.on("message", (task) => {
  let answer
  try { answer = { value: run(task) } } catch (error) { answer = { failure: String(error && error.message || error) } }
  parentPort.postMessage(answer)
})
`

const require = createRequire(import.meta.url)
const natives = { argon2: require.resolve("@node-rs/argon2"), bcrypt: require.resolve("@node-rs/bcrypt") }

export interface HashingThreads {
  /** Runs the task on the least busy thread, waiting when every thread has its fill. Not interruptible: a hash under way holds its thread until it ends. */
  readonly run: (task: HashTask) => Effect.Effect<string | boolean>
  /** Whether every thread runs below the event loop's priority (false where the platform does not allow it). */
  readonly lowered: Effect.Effect<boolean>
  readonly size: number
}

/** A thread and the callers of the tasks it was given, in the order it answers them. */
interface Thread {
  readonly worker: Worker
  readonly waiting: Array<(answer: Exit.Exit<unknown>) => void>
}

/** What a thread answers a task: its value, or why it failed. */
type Answer = { readonly value: unknown } | { readonly failure: string }

/**
 * Password hashing on threads of its own, off libuv's pool (which stays free for name lookups and
 * file operations) and below the event loop's priority: however many sign-ins hash at once, the
 * routes that hash nothing are served first. A task that fails dies, and its thread goes on; a
 * thread that ends or errs is replaced, and the tasks it held die. The threads end with the scope.
 */
export const make = (size = hashingThreadCount()): Effect.Effect<HashingThreads, never, Scope.Scope> =>
  Effect.gen(function* () {
    const threads: Array<Thread> = []
    const start = (index: number) => {
      const thread: Thread = { worker: new Worker(source, { eval: true, workerData: natives }), waiting: [] }
      const ended = (error: unknown) => {
        if (threads[index] !== thread) return
        start(index)
        void thread.worker.terminate()
        for (const resume of thread.waiting.splice(0)) resume(Exit.die(error))
      }
      thread.worker
        .on("message", (answer: Answer) => {
          const resume = thread.waiting.shift()
          if (thread.waiting.length === 0) thread.worker.unref()
          resume?.("value" in answer ? Exit.succeed(answer.value) : Exit.die(new Error(answer.failure)))
        })
        .on("error", ended)
        .once("exit", (code) => ended(new Error(`a hashing thread exited (code ${code})`)))
        .unref()
      threads[index] = thread
    }
    for (let index = 0; index < size; index++) start(index)
    yield* Effect.addFinalizer(() =>
      Effect.promise(() => Promise.all(threads.splice(0).map(({ worker }) => worker.terminate())))
    )
    const ask = (thread: Thread, message: unknown) =>
      Effect.async<unknown>((resume) => {
        thread.worker.postMessage(message)
        thread.waiting.push(resume)
        // Referenced while it works, so that a command waiting for a hash is not ended for want of work.
        thread.worker.ref()
      })
    /** The threads of the moment: a thread ended meanwhile has been replaced. */
    const askEach = (message: unknown) =>
      Effect.suspend(() =>
        Effect.all(
          threads.map((thread) => ask(thread, message)),
          { concurrency: "unbounded" }
        )
      )
    // Every thread has started and loaded the hashers before the first request: a failure to load
    // them stops start-up instead of the first sign-in.
    yield* askEach({ op: "priority" })
    const turn = (yield* Effect.makeSemaphore(size * TASKS_A_THREAD)).withPermits(1)
    /** The thread with the fewest tasks; a permit guarantees it has room. */
    const leastBusy = () => {
      let chosen = threads[0] as Thread
      for (const thread of threads) if (thread.waiting.length < chosen.waiting.length) chosen = thread
      return chosen
    }
    return {
      run: (task) =>
        Effect.uninterruptible(turn(Effect.suspend(() => ask(leastBusy(), task)))) as Effect.Effect<string | boolean>,
      lowered: Effect.map(askEach({ op: "priority" }), (answers) => answers.every((answer) => answer === true)),
      size
    }
  })
