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
  package: "test/e2e/package.test.ts",
  clientPackage: "test/package/client-package.test.ts"
} as const

/** What every tier shares: the build the process tests run, and the time a test may take. */
export const shared = {
  globalSetup: ["test/support/global-setup.ts"],
  // Argon2 hashing at production parameters makes HTTP tests slower than unit tests.
  testTimeout: 30_000,
  hookTimeout: 30_000,
  // Most files wait on servers, child processes and databases more than they compute, so two
  // files at once pay even on two cores (vitest's default there would be one).
  maxWorkers: Math.max(2, availableParallelism() - 1)
}

/** `npm test`: everything a change must pass. */
export default defineConfig({
  test: {
    ...shared,
    include: ["test/**/*.test.ts"],
    exclude: Object.values(extraSuites)
  }
})
