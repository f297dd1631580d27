import { readFileSync } from "node:fs"
import { describe, expect, it } from "vitest"

const read = (path: string) => readFileSync(new URL(`../../${path}`, import.meta.url), "utf8")

/** docs/integrating.md's section on the typed client, up to the next section. */
const clientSection = () => read("docs/integrating.md").split("\n## The typed client\n")[1]?.split("\n## ")[0] ?? ""

describe("docs/integrating.md on installing the typed client", () => {
  it("says what installing it takes while it is a subpath of the server's package", () => {
    const pkg = JSON.parse(read("package.json")) as { name: string; exports: Record<string, unknown> }
    // Its import graph is held by test/http/client-import-graph.test.ts; what an app installs is the package.
    expect(pkg.exports["./client"]).toBeDefined()
    const section = clientSection()
    expect(section).toContain(`\`npm install ${pkg.name}\``)
    expect(section).toContain("every dependency of the server")
    expect(section).not.toMatch(/needs `effect` and `@effect\/platform` only/)
  })
})
