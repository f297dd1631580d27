import { readFileSync } from "node:fs"
import { describe, expect, it } from "vitest"

const read = (path: string) => readFileSync(new URL(`../../${path}`, import.meta.url), "utf8")

/** docs/integrating.md's section on the typed client, up to the next section. */
const clientSection = () => read("docs/integrating.md").split("\n## The typed client\n")[1]?.split("\n## ")[0] ?? ""

describe("docs/integrating.md on installing the typed client", () => {
  it("names the client's own package and the dependencies it really has", () => {
    const client = JSON.parse(read("packages/client/package.json")) as {
      name: string
      dependencies: Record<string, string>
    }
    const section = clientSection()
    expect(section).toContain(`npm install ${client.name}`)
    // What the section says it needs is what the package lists (test/package/client-package.test.ts installs it).
    expect(Object.keys(client.dependencies).sort()).toEqual(["@effect/platform", "effect", "jose"])
    expect(section).toContain(
      "its dependencies are `effect` and `@effect/platform`, and `jose` for\nits resource-server entry point alone"
    )
    // The old subpath is there for a while, and the section says what it costs.
    const server = JSON.parse(read("package.json")) as { exports: Record<string, unknown> }
    expect(server.exports["./client"]).toBeDefined()
    expect(section).toContain("installs the whole server")
  })
})
