import { defineConfig } from "vitest/config"

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    globalSetup: ["test/support/global-setup.ts"],
    // Argon2 hashing at production parameters makes HTTP tests slower than unit tests.
    testTimeout: 30_000,
    hookTimeout: 30_000
  }
})
