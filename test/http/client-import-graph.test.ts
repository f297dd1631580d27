import { readFileSync } from "node:fs"
import { dirname, relative, resolve } from "node:path"
import { fileURLToPath } from "node:url"
import { describe, expect, it } from "vitest"

/**
 * The client (portcullis/client) must load in a browser or another service without the server:
 * the modules it imports at run time, followed through the build (dist/, which the global setup
 * compiles), are the HTTP definitions and the domain, and packages no further than Effect's (and
 * punycode, below).
 */

const root = fileURLToPath(new URL("../..", import.meta.url))
const importPattern = /(?:^|\n)\s*(?:import|export)\s*(?:[^"';]*?\s*from\s*)?["']([^"']+)["']/g

/** Every module the file loads at run time, itself included: relative paths and package names. */
const runtimeGraph = (entry: string) => {
  const files = new Set<string>()
  const packages = new Set<string>()
  const visit = (file: string) => {
    if (files.has(file)) return
    files.add(file)
    for (const [, specifier = ""] of readFileSync(file, "utf8").matchAll(importPattern)) {
      if (specifier.startsWith(".")) visit(resolve(dirname(file), specifier))
      else
        packages.add(
          specifier.startsWith("@") ? specifier.split("/").slice(0, 2).join("/") : (specifier.split("/")[0] ?? "")
        )
    }
  }
  visit(resolve(root, entry))
  return { files: [...files].map((file) => relative(resolve(root, "dist"), file)), packages: [...packages] }
}

describe("the client's import graph", () => {
  const exported = JSON.parse(readFileSync(resolve(root, "package.json"), "utf8")).exports["./client"].default as string
  const graph = runtimeGraph(exported)

  it("is what package.json exports as portcullis/client, and follows its imports", () => {
    expect(exported).toBe("./dist/interfaces/http/client.js")
    expect(graph.files).toContain("domain/errors.js")
    expect(graph.files).toContain("interfaces/http/features/auth/group.js")
  })

  it("holds no use case, adapter, composition or settings code, nor the server's HTTP modules", () => {
    const server = graph.files.filter(
      (file) =>
        /^(application|infrastructure|composition|config)\//.test(file) ||
        /^interfaces\/(cli|http\/(features\/[^/]+\/handlers|Feature|server|pipeline|middleware|Authentication|AccessLevels|cookies))/.test(
          file
        )
    )
    expect(server).toEqual([])
  })

  // punycode decodes an address's xn-- labels for the look-alike rule of the payloads
  // (domain/Address.ts): plain JavaScript with no Node built-in, which @portcullis/client bundles.
  it("needs no package but Effect's, and punycode", () => {
    expect(graph.packages.sort()).toEqual(["@effect/platform", "effect", "punycode"])
  })
})
