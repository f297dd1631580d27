import { readFileSync } from "node:fs"
import { dirname, join, normalize, relative } from "node:path"
import { describe, expect, it } from "vitest"
import { repositoryRoot as root, sourceFiles as sources } from "../support/sourceFiles.js"

/**
 * The dependency rule of docs/contributing.md ("Layout"): every import, static or dynamic, goes
 * from a folder to one of a lower layer, never up and never sideways, so no cycle can run between
 * folders. The process (main/) and the package's entry (index.ts) stand above the composition
 * root; the CLI and the HTTP interface sit beside the adapters, not on them.
 */

const layers: Readonly<Record<string, number>> = {
  domain: 0,
  config: 1,
  application: 1,
  infrastructure: 2,
  interfaces: 2,
  composition: 3,
  main: 4,
  "index.ts": 4
}

const folderOf = (path: string) => relative(root, path).split("/")[0] ?? ""

const imports = (file: string) =>
  [...readFileSync(file, "utf8").matchAll(/(?:\bfrom\s+|\bimport\s*\(\s*)["'](\.{1,2}\/[^"']+)["']/g)].map((match) =>
    normalize(join(dirname(file), match[1] ?? ""))
  )

describe("the layers", () => {
  it("every import goes down a layer, or stays in its own folder", () => {
    const upward: Array<string> = []
    for (const folder of Object.keys(layers)) {
      for (const file of sources(join(root, folder))) {
        for (const target of imports(file)) {
          const from = folderOf(file)
          const to = folderOf(target)
          if (from === to) continue
          const [rankFrom = -1, rankTo = -1] = [layers[from], layers[to]]
          if (rankTo >= rankFrom) upward.push(`${relative(root, file)} -> ${relative(root, target)}`)
        }
      }
    }
    expect(upward).toEqual([])
  })
})

describe("the CLI", () => {
  it("reaches the process (environment, standard streams, exit code) only through its Invocation", () => {
    const reaching = sources(join(root, "interfaces/cli")).flatMap((file) =>
      readFileSync(file, "utf8")
        .split("\n")
        .flatMap((line, at) =>
          /\bprocess\.(env|std(in|out|err)|exitCode|exit\b|argv|cwd)/.test(line.replace(/^\s*(\/\/|\*).*$/, ""))
            ? [`${relative(root, file)}:${at + 1}: ${line.trim()}`]
            : []
        )
    )
    expect(reaching).toEqual([])
  })
})
