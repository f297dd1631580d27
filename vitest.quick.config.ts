import { defineConfig } from "vitest/config"
import { shared } from "./vitest.config.js"

/**
 * `npm run test:quick`, the edit loop: the unit suites, every port's contract suite on memory and
 * SQLite, and the HTTP suites on memory; no CLI and no PostgreSQL or Redis (their URLs are
 * dropped here, so those suites report as skipped even where they are set). `npm test` runs all
 * of it and the rest.
 *
 * Every file has a process of its own, as in `npm test`. Vitest can run a worker's files one
 * after another in one process (`isolate: false`, which it honours only at the top level, never
 * in a project), but these files do not survive it: a service layer closed after others in the
 * same process has been seen to hang its worker (docs/contributing.md "Test times").
 */
delete process.env.TEST_DATABASE_URL
delete process.env.TEST_REDIS_URL

export default defineConfig({
  test: {
    ...shared,
    // The fuzz suite shares its requests among its servers: with memory's two alone, this many
    // gives each as many as in `npm test`.
    env: { TEST_BACKENDS: "memory", FUZZ_RUNS: "2500" },
    // Several of these files mostly wait (a sign-in growing old, a state expiring): a third
    // worker runs another file meanwhile.
    maxWorkers: 3,
    include: ["test/{domain,application,config,infrastructure,contract,http}/**/*.test.ts"]
  }
})
