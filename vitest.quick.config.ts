import { defineConfig } from "vitest/config"
import { shared } from "./vitest.config.js"

/**
 * `npm run test:quick`, the edit loop: the unit suites, every port's contract suite on memory and
 * SQLite, and the HTTP suites on memory, all in this process; no CLI, no server process, no
 * PostgreSQL or Redis (their URLs are dropped here, so those suites report as skipped even where
 * they are set). `npm test` runs all of it and the rest.
 */
delete process.env.TEST_DATABASE_URL
delete process.env.TEST_REDIS_URL

export default defineConfig({
  test: {
    ...shared,
    include: ["test/{domain,application,config,infrastructure,contract,http}/**/*.test.ts"],
    // The fuzz suite shares its requests among its servers: with memory's two alone, this many
    // gives each as many as in `npm test`.
    env: { TEST_BACKENDS: "memory", FUZZ_RUNS: "2500" }
  }
})
