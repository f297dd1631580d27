import { existsSync, readdirSync, readFileSync, statSync } from "node:fs"
import { dirname, join, relative, resolve } from "node:path"
import { fileURLToPath } from "node:url"
import { describe, expect, it } from "vitest"
import { features } from "../../composition/features.js"

/**
 * What docs/contributing.md ("Adding a feature") says a feature is, held to the tree: each is one
 * folder of interfaces/http/features/ (its group, its handlers), wired in one table of the
 * composition root (its use cases with it) and in the typed client, and nowhere else.
 */

const root = fileURLToPath(new URL("../..", import.meta.url))
const read = (path: string) => readFileSync(join(root, path), "utf8")
const sourceFolders = ["application", "composition", "config", "domain", "infrastructure", "interfaces"]

const sourcesUnder = (folder: string): ReadonlyArray<string> =>
  readdirSync(join(root, folder)).flatMap((entry) => {
    const path = join(folder, entry)
    if (statSync(join(root, path)).isDirectory()) return sourcesUnder(path)
    return path.endsWith(".ts") ? [path] : []
  })
const sources = [...sourceFolders.flatMap(sourcesUnder), "index.ts"]

const importPattern = /(?:^|\n)\s*(?:import|export)\s*(?:type\s+)?(?:[^"';]*?\s*from\s*)?["']([^"']+)["']/g

/** The source files a file imports (type-only imports included), relative to the repository. */
const importsOf = (file: string): ReadonlyArray<string> =>
  [...read(file).matchAll(importPattern)].flatMap(([, specifier = ""]) =>
    specifier.startsWith(".") ? [relative(root, resolve(root, dirname(file), specifier)).replace(/\.js$/, ".ts")] : []
  )

/** Which source files import `target`. */
const importersOf = (target: string) => sources.filter((file) => importsOf(file).includes(target)).sort()

/** The "Adding a feature" section of the contributing guide. */
const guide = () => {
  const text = read("docs/contributing.md")
  const start = text.indexOf("### Adding a feature")
  const end = text.indexOf("\n| Command", start)
  expect(start).toBeGreaterThan(-1)
  return text.slice(start, end === -1 ? undefined : end)
}

describe("a feature, as the contributing guide tells it", () => {
  it("every file and folder the guide names exists", () => {
    const paths = [...guide().matchAll(/`([\w./<>-]+\/[\w.<>-]*)`/g)]
      .map(([, path = ""]) => path)
      .filter((path) => !path.includes("<"))
    expect(paths.length).toBeGreaterThanOrEqual(10)
    expect(paths.filter((path) => !existsSync(join(root, path)))).toEqual([])
  })

  it("the guide's example is a feature of the table", () => {
    const example = /features\/(\w+)\/group\.ts/.exec(guide())?.[1]
    expect(features.map((feature) => feature.name)).toContain(example)
  })

  for (const { name } of features) {
    const folder = `interfaces/http/features/${name}`

    // A feature with routes beside the API (the provider's protocol routes) keeps their modules in its folder too.
    it(`${name} is one folder: its group, its handlers and the modules of its own`, () => {
      expect(readdirSync(join(root, folder))).toEqual(expect.arrayContaining(["group.ts", "handlers.ts"]))
    })

    it(`${name} is registered in the table of features alone, and its group in the typed client alone`, () => {
      expect(importersOf(`${folder}/handlers.ts`)).toEqual(["composition/features.ts"])
      expect(importersOf(`${folder}/group.ts`)).toEqual(["interfaces/http/client.ts", `${folder}/handlers.ts`])
    })
  }

  it("no HTTP module builds a use case's layer: the composition root gives each feature its own", () => {
    const built = sourcesUnder("interfaces/http").flatMap((file) => {
      const text = read(file)
      const useCases = [...text.matchAll(/import \{([^}]*)\} from "(?:\.\.\/)+application\/\w+\.js"/g)].flatMap(
        ([, names = ""]) => names.split(",").map((name) => name.trim().replace(/^type\s+/, ""))
      )
      return useCases
        .filter((name) => name !== "" && text.includes(`${name}.Default`))
        .map((name) => `${file}: ${name}`)
    })
    expect(built).toEqual([])
  })
})
