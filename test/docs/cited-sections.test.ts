import { readFileSync } from "node:fs"
import { join, relative } from "node:path"
import { describe, expect, it } from "vitest"
import { repositoryRoot, sourceFiles } from "../support/sourceFiles.js"

/**
 * Comments point a maintainer at the project's own documents, never at a file outside the
 * repository, and every section they cite (`docs/behaviour.md, "Ways in"`) exists.
 */

const root = repositoryRoot
const sourceFolders = [
  "application",
  "bench",
  "composition",
  "config",
  "domain",
  "infrastructure",
  "interfaces",
  "scripts",
  "test"
]
const outside = /\b(DECISIONS|ARCHITECTURE|EFFECT3-NOTES)(\.md)?\b/

const files = sourceFolders.flatMap((folder) => sourceFiles(join(root, folder), /\.(ts|mjs)$/))

/** GitHub's way of naming a heading, which a citation matches by its words. */
const headingsOf = (document: string) =>
  new Set(
    [...readFileSync(join(root, document), "utf8").matchAll(/^#{1,6} (.*)$/gm)].map((match) =>
      (match[1] ?? "").trim().toLowerCase()
    )
  )

describe("comments in the sources", () => {
  it("cite no document outside the repository", () => {
    const citing = files.filter((file) => file !== import.meta.filename && outside.test(readFileSync(file, "utf8")))
    expect(citing.map((file) => relative(root, file))).toEqual([])
  })

  it("cite sections of docs/ and SECURITY.md that exist", () => {
    const missing: Array<string> = []
    for (const file of files) {
      const text = readFileSync(file, "utf8").replace(/\n\s*(\*|\/\/)\s*/g, " ")
      for (const [, document = "", heading = ""] of text.matchAll(/((?:docs\/[\w-]+|SECURITY)\.md),\s+"([^"]+)"/g)) {
        if (!headingsOf(document).has(heading.toLowerCase())) {
          missing.push(`${relative(root, file)}: ${document}, "${heading}"`)
        }
      }
    }
    expect(missing).toEqual([])
  })
})
