import { readFileSync } from "node:fs"
import { describe, expect, it } from "vitest"
import { LOG_LEVELS, takeLogLevel } from "../../interfaces/cli/logLevel.js"

const readme = readFileSync(new URL("../../README.md", import.meta.url), "utf8")

describe("the README on --log-level", () => {
  it("names exactly the levels the CLI takes", () => {
    const documented = /`--log-level ([a-z|]+)`/.exec(readme)?.[1]?.split("|")
    expect(documented).toEqual([...LOG_LEVELS])
    for (const level of documented ?? []) expect(takeLogLevel(["--log-level", level])._tag, level).toBe("Right")
    // The library's own `all` was taken and named nowhere.
    expect(takeLogLevel(["--log-level", "all"])._tag).toBe("Left")
  })
})
