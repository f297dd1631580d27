import { defineConfig } from "vitest/config"
import { shared } from "./vitest.config.js"

/**
 * `npm run test:quick`, the edit loop: the unit suites, every port's contract suite on memory and
 * SQLite, and the HTTP suites on memory; no CLI and no PostgreSQL or Redis (their URLs are
 * dropped here, so those suites report as skipped even where they are set). `npm test` runs all
 * of it and the rest.
 *
 * Importing the service costs each file more than most of its tests do, so each worker runs its
 * files one after another in one process, sharing what they import (`isolate: false`, which
 * vitest honours at the top level only, never in a project). A failure here that the file alone
 * (`npx vitest run <file>`) does not show is state one file left for the next; `npm test`, which
 * gives every file a process of its own, is the judge.
 */
delete process.env.TEST_DATABASE_URL
delete process.env.TEST_REDIS_URL

/** Several of these files mostly wait (a sign-in growing old, a state expiring): a third worker runs another file meanwhile. */
const workers = 3

export default defineConfig({
  test: {
    ...shared,
    // The fuzz suite shares its requests among its servers: with memory's two alone, this many
    // gives each as many as in `npm test`.
    env: { TEST_BACKENDS: "memory", FUZZ_RUNS: "2500" },
    include: ["test/{domain,application,config,infrastructure,contract,http}/**/*.test.ts"],
    isolate: false,
    setupFiles: ["test/support/shared-process.ts"],
    maxWorkers: workers,
    // As many workers from the start as at most: with fewer kept (vitest's default is one less
    // than the cores), the pool ends a worker it counts as idle while that worker still runs its
    // last file, and the run stops there with "Terminating worker thread".
    minWorkers: workers
  }
})
