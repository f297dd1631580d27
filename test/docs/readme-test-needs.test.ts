import { readdirSync, readFileSync } from "node:fs"
import { describe, expect, it } from "vitest"
import { CHROMIUM } from "../support/browser.js"

const readme = readFileSync(new URL("../../README.md", import.meta.url), "utf8")

/** The README's paragraph on what `npm test` needs: the text after the block that runs it. */
const needs = readme.split("```sh\nnpm test\n```\n")[1]?.split("\n\n")[0] ?? ""

/** The variables the test support reads to find a database, a Redis or a browser to use. */
const optionalPieces = () => {
  const support = new URL("../support/", import.meta.url)
  const read = readdirSync(support)
    .filter((file) => file.endsWith(".ts"))
    .flatMap((file) => [...readFileSync(new URL(file, support), "utf8").matchAll(/process\.env\.(TEST_[A-Z_]+)/g)])
    .map((match) => match[1] ?? "")
  // TEST_BACKENDS only narrows the backends a run covers (docs/contributing.md); it needs nothing.
  return [...new Set(read)].filter((name) => name !== "TEST_BACKENDS").sort()
}

describe("the README on what npm test needs", () => {
  it("says a build comes first, rather than that Node alone will do", () => {
    expect(needs).toContain("builds `dist/` first")
    expect(needs).not.toMatch(/nothing but Node/)
  })

  it("names every optional piece the suites look for, and the browser's path", () => {
    expect(optionalPieces()).toEqual(["TEST_DATABASE_URL", "TEST_REDIS_URL", "TEST_REQUIRE_CHROMIUM"])
    for (const name of optionalPieces()) expect(needs, name).toContain(`\`${name}`)
    expect(needs).toContain(`\`${CHROMIUM}\``)
  })
})
