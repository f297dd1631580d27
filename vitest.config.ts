import { availableParallelism } from "node:os"
import { defineConfig } from "vitest/config"

/**
 * Files that measure the machine itself (timing medians, event-loop delay, memory), each run
 * alone after the rest so that no other file's load moves what they measure.
 */
const alone = ["test/e2e/timing.test.ts", "test/e2e/soak.test.ts"]

export default defineConfig({
  test: {
    globalSetup: ["test/support/global-setup.ts"],
    // Argon2 hashing at production parameters makes HTTP tests slower than unit tests.
    testTimeout: 30_000,
    hookTimeout: 30_000,
    // Most files wait on servers, child processes and databases more than they compute, so two
    // files at once pay even on two cores (vitest's default there would be one).
    maxWorkers: Math.max(2, availableParallelism() - 1),
    projects: [
      { extends: true, test: { name: "suite", include: ["test/**/*.test.ts"], exclude: alone } },
      ...alone.map((file, index) => ({
        extends: true as const,
        test: { name: file.replace(/^.*\/|\.test\.ts$/g, ""), include: [file], sequence: { groupOrder: index + 1 } }
      }))
    ]
  }
})
