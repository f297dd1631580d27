import { makeMethods } from "@effect/vitest"
import { it } from "vitest"

/**
 * Set up before each test file of a project that runs its files one after another in one
 * process (`isolate: false`, the HTTP suites of `npm run test:quick`). @effect/vitest's `layer()`
 * assigns its own `effect` and `scoped` (its layer's runtime, without the test services when
 * `excludeTestServices` is set) onto vitest's shared `it`, so a file after one that used `layer()`
 * would run its `it.effect` tests on the live clock, inside that runtime. This puts the defaults
 * back.
 */
makeMethods(Object.assign(it, { scopedFixtures: it.scoped }))
