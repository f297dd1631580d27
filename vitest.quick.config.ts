import { defineConfig } from "vitest/config"
import { extraSuites, shared, sharedProcesses } from "./vitest.config.js"

/**
 * `npm run test:quick`, the edit loop: the unit suites, every port's contract suite on memory and
 * SQLite, and the HTTP suites on memory; no CLI and no PostgreSQL or Redis (their URLs are
 * dropped here, so those suites report as skipped even where they are set). `npm test` runs all
 * of it and the rest, its files sharing processes the same way.
 */
delete process.env.TEST_DATABASE_URL
delete process.env.TEST_REDIS_URL

export default defineConfig({
  test: {
    ...shared,
    ...sharedProcesses,
    // The fuzz suite shares its requests among its servers: this many gives each of memory's two
    // 1,250 (each of `npm test`'s six gets about 1,700).
    env: { TEST_BACKENDS: "memory", FUZZ_RUNS: "2500" },
    include: ["test/{domain,application,config,infrastructure,contract,http}/**/*.test.ts"],
    exclude: Object.values(extraSuites)
  }
})
