import { readdirSync, readFileSync } from "node:fs"
import { describe, expect, it } from "vitest"
import { configurationReference } from "../../config/reference.js"
import { describeSettings } from "../../config/Settings.js"

const committed = () => readFileSync(new URL("../../docs/configuration.md", import.meta.url), "utf8")

describe("the configuration reference", () => {
  it("is what the settings definition generates (run `npm run docs` after changing a setting)", () => {
    expect(committed()).toBe(configurationReference(describeSettings()))
  })

  it("describes every setting, each with what it does", () => {
    const undocumented = describeSettings().filter((setting) => (setting.doc ?? "").trim() === "")
    expect(undocumented.map((setting) => setting.name)).toEqual([])
  })

  it("lists every variable a section reads, even one read only when another is set", () => {
    const sections = new URL("../../config/sections/", import.meta.url)
    const literal = /read\s*\.(?:setting|optional|secret)\(\s*"([A-Z0-9_]+)"/g
    const readInSource = readdirSync(sections).flatMap((file) =>
      [...readFileSync(new URL(file, sections), "utf8").matchAll(literal)].map((match) => `SERVICE_${match[1]}`)
    )
    const described = new Set(describeSettings().map((setting) => setting.name))
    expect(readInSource.length).toBeGreaterThan(40)
    expect(readInSource.filter((name) => !described.has(name))).toEqual([])
    expect(committed()).toContain("| `SERVICE_PORT` | `8000` |")
  })

  it("is linked from the README", () => {
    expect(readFileSync(new URL("../../README.md", import.meta.url), "utf8")).toContain("docs/configuration.md")
  })
})
