import { defineConfig } from "vitest/config"
import { extraSuites, shared } from "./vitest.config.js"

/**
 * The suites beyond `npm test` (`npm run test:soak`, `test:timing`, `test:package`; .ci/run runs
 * each after `npm test`), one file at a time so that no other file's load moves what they measure.
 */
export default defineConfig({
  test: {
    ...shared,
    include: Object.values(extraSuites),
    fileParallelism: false
  }
})
