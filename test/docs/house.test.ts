import { readFileSync } from "node:fs"
import { join, relative } from "node:path"
import { describe, expect, it } from "vitest"
import { repositoryRoot, sourceFiles } from "../support/sourceFiles.js"

/**
 * The house rules of docs/contributing.md that a reader trips over when they slip: files small
 * enough to read in one sitting, and types the compiler is told, not forced, but for the
 * schemas built at run time.
 */

const root = repositoryRoot
const folders = [
  "domain",
  "config",
  "application",
  "infrastructure",
  "interfaces",
  "composition",
  "main",
  "packages/client/src"
]

const files = [...folders.flatMap((folder) => sourceFiles(join(root, folder))), join(root, "index.ts")]

describe("the house", () => {
  it("has no source file past 300 lines", () => {
    const long = files.flatMap((file) => {
      const lines = readFileSync(file, "utf8").split("\n").length
      return lines > 300 ? [`${relative(root, file)}: ${lines}`] : []
    })
    expect(long).toEqual([])
  })

  it("forces a type through `unknown` in at most two places, both over schemas built at run time", () => {
    const casts = files.flatMap((file) =>
      readFileSync(file, "utf8")
        .split("\n")
        .flatMap((line, index) => (line.includes("as unknown as") ? [`${relative(root, file)}:${index + 1}`] : []))
    )
    expect(casts.length, casts.join("\n")).toBeLessThanOrEqual(2)
  })
})
