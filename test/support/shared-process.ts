import { makeMethods } from "@effect/vitest"
import { it } from "vitest"

/**
 * Set up before each test file, which runs after others in one process (`isolate: false`:
 * `npm test` and `npm run test:quick`, vitest.config.ts). @effect/vitest's `layer()`
 * assigns its own `effect` and `scoped` (its layer's runtime, without the test services when
 * `excludeTestServices` is set) onto vitest's shared `it`, so a file after one that used `layer()`
 * would run its `it.effect` tests on the live clock, inside that runtime. This puts the defaults
 * back.
 */
makeMethods(Object.assign(it, { scopedFixtures: it.scoped }))
