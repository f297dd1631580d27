import { execFileSync } from "node:child_process"
import { readdirSync } from "node:fs"
import { join } from "node:path"
import { describe, expect, it } from "vitest"
import { repositoryRoot } from "../support/sourceFiles.js"

/**
 * Each kept optimisation must stay measurable against its plain path (docs/contributing.md,
 * "Optimisations"): `node bench/ab.mjs` applies each patch of bench/ab/ to this tree, so a patch
 * that no longer applies is an optimisation nobody can re-earn.
 */
const patches = readdirSync(join(repositoryRoot, "bench/ab")).filter((file) => file.endsWith(".patch"))

describe("bench/ab's patches", () => {
  it.each(patches)("%s applies to this tree", (patch) => {
    const check = () =>
      execFileSync("git", ["apply", "--check", join("bench/ab", patch)], { cwd: repositoryRoot, stdio: "pipe" })
    expect(check).not.toThrow()
  })
})
