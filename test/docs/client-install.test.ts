import { readFileSync } from "node:fs"
import { describe, expect, it } from "vitest"
import { routeTable } from "../../packages/client/src/promise/routeTable.js"

const read = (path: string) => readFileSync(new URL(`../../${path}`, import.meta.url), "utf8")

/** docs/integrating.md's section on the typed client, up to the next section. */
const clientSection = () => read("docs/integrating.md").split("\n## The typed client\n")[1]?.split("\n## ")[0] ?? ""

describe("docs/integrating.md on the typed client", () => {
  it("names the client's own package and the dependencies it really has", () => {
    const client = JSON.parse(read("packages/client/package.json")) as {
      name: string
      dependencies: Record<string, string>
      peerDependencies: Record<string, string>
      exports: Record<string, unknown>
    }
    const section = clientSection()
    expect(section).toContain(`npm install ${client.name}`)
    // What the section says it needs is what the package lists (test/package/client-package.test.ts installs it).
    expect(Object.keys(client.dependencies).sort()).toEqual(["jose"])
    expect(Object.keys(client.peerDependencies).sort()).toEqual(["@effect/platform", "effect"])
    expect(section).toContain("`effect` and `@effect/platform` are the package's peer dependencies")
    expect(section).toContain("`jose` is its one dependency, for the resource-server entry point alone")
    for (const entry of Object.keys(client.exports).filter((name) => name !== "./package.json"))
      expect(section).toContain(`\`${client.name}${entry.slice(1)}\``)
    // The old subpath is there for a while, and the section says what it costs.
    const server = JSON.parse(read("package.json")) as { exports: Record<string, unknown> }
    expect(server.exports["./client"]).toBeDefined()
    expect(section).toContain("installs the whole server")
  })

  it("lists every group of the client, and every call of each", () => {
    const section = clientSection()
    for (const [group, endpoints] of Object.entries(routeTable)) {
      const listed = section.match(new RegExp(`\`client\\.${group}\\.([\\w|]+)\``))?.[1]?.split("|") ?? []
      expect({ group, listed: listed.sort() }).toEqual({ group, listed: Object.keys(endpoints).sort() })
    }
  })
})
