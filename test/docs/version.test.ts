import { readFileSync } from "node:fs"
import { join } from "node:path"
import { describe, expect, it } from "vitest"
import { packageVersion } from "../../config/packageVersion.js"

/** One version everywhere: the server's package, the client's, the CHANGELOG's latest heading, `--version`. */

const root = join(import.meta.dirname, "..", "..")
const versionOf = (manifest: string) =>
  (JSON.parse(readFileSync(join(root, manifest), "utf8")) as { version: string }).version

describe("the version", () => {
  it("is the CHANGELOG's latest, in both packages and as the CLI and the OpenAPI document read it", () => {
    const latest = /^## \[(\d+\.\d+\.\d+)\]/m.exec(readFileSync(join(root, "CHANGELOG.md"), "utf8"))?.[1]
    expect(versionOf("package.json")).toBe(latest)
    expect(versionOf("packages/client/package.json")).toBe(latest)
    expect(packageVersion).toBe(latest)
  })
})
