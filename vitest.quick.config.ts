import { defineConfig } from "vitest/config"
import { shared } from "./vitest.config.js"

/**
 * `npm run test:quick`, the edit loop: the unit suites, every port's contract suite on memory and
 * SQLite, and the HTTP suites on memory; no CLI and no PostgreSQL or Redis (their URLs are
 * dropped here, so those suites report as skipped even where they are set). `npm test` runs all
 * of it and the rest.
 *
 * Importing the service and building it costs each HTTP file more than most of its tests do, so
 * every file (unit and HTTP alike) runs after others in one process per worker, sharing what they import. A
 * failure here that the file alone (`npx vitest run <file>`) does not show is state one file
 * left for the next; `npm test`, which gives every file a process of its own, is the judge.
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
    projects: [
      {
        extends: true as const,
        test: {
          name: "unit",
          include: ["test/{domain,application,config,infrastructure,contract}/**/*.test.ts"],
          isolate: false,
          setupFiles: ["test/support/shared-process.ts"]
        }
      },
      {
        extends: true as const,
        test: {
          name: "http",
          include: ["test/http/**/*.test.ts"],
          isolate: false,
          setupFiles: ["test/support/shared-process.ts"]
        }
      }
    ]
  }
})
