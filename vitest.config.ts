import { availableParallelism } from "node:os"
import { defineConfig } from "vitest/config"

/**
 * The suites `npm test` leaves to CI (.ci/run), each run alone by name through
 * vitest.extra.config.ts: they measure the machine itself (timing medians, event-loop delay,
 * memory over minutes) or take minutes of their own (packing and installing the packages).
 */
export const extraSuites = {
  soak: "test/e2e/soak.test.ts",
  timing: "test/e2e/timing.test.ts",
  answering: "test/http/ending-sessions-answering.test.ts",
  // Another process must win the SQLite write lock between a sweep's batches within its busy
  // timeout: on a machine loaded by the rest of a run, a matter of scheduling more than of the rule.
  sweepLock: "test/application/sweep-shares-the-lock.test.ts",
  package: "test/e2e/package.test.ts",
  clientPackage: "test/package/client-package.test.ts"
} as const

/** What every tier shares: the build the process tests run, and the time a test may take. */
export const shared = {
  globalSetup: ["test/support/global-setup.ts"],
  // Argon2 hashing at production parameters makes HTTP tests slower than unit tests.
  testTimeout: 30_000,
  hookTimeout: 30_000
}

/** Most files wait on servers, child processes and databases more than they compute: one worker more than the cores. */
const workers = availableParallelism() + 1

/**
 * How `npm test` and `npm run test:quick` run their files: importing the service costs a file
 * more than most of its tests do, so each worker runs its files one after another in one process,
 * sharing what they import (`isolate: false`, which vitest honours at the top level only, never in
 * a project). `npm test -- --isolate` gives every file a process of its own instead: the judge
 * when a failure that the file alone (`npx vitest run <file>`) does not show looks like state one
 * file left for the next.
 */
export const sharedProcesses = {
  isolate: false,
  setupFiles: ["test/support/shared-process.ts"],
  maxWorkers: workers,
  // As many workers from the start as at most: with fewer kept (vitest's default is one less than
  // the cores), the pool ends a worker it counts as idle while that worker still runs its last
  // file, and the run stops there with "Terminating worker thread".
  minWorkers: workers
}

/** `npm test`: everything a change must pass. */
export default defineConfig({
  test: {
    ...shared,
    ...sharedProcesses,
    include: ["test/**/*.test.ts"],
    exclude: Object.values(extraSuites)
  }
})
