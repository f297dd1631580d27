import { readFileSync, rmSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { describe, expect, it } from "vitest"
import { runProcess } from "../support/cliRun.js"
import { root } from "../support/processes.js"

/**
 * The Promise client's types as an app's compiler sees them (tsc, strict, on a small app):
 * fixtures/client-types-app.ts marks each mistake it must refuse as an expected error. Checked
 * as written, it compiles (so every marked line is refused); checked with the marks taken out,
 * each refusal is there for the reason the mark gives (the typo named, the unknown code).
 */

const app = join(root, "test/package/fixtures/client-types-app.ts")
const tsc = join(root, "node_modules/typescript/bin/tsc")
const options = ["--noEmit", "--strict", "--target", "es2022", "--module", "nodenext", "--skipLibCheck"]
const check = (file: string) =>
  runProcess(process.execPath, [tsc, ...options, "--lib", "es2022,dom", "--types", "node", file], {
    cwd: root,
    timeout: 120_000
  })

describe("the Promise client's types", () => {
  it("accept the app's calls and refuse a payload typo, an unknown field and an unknown error code", {
    timeout: 180_000
  }, async () => {
    const checked = await check(app)
    expect(checked.stdout).toBe("")
    expect(checked.status).toBe(0)

    const unmarked = join(root, "test/package/fixtures/.client-types-unmarked.ts")
    writeFileSync(unmarked, readFileSync(app, "utf8").replaceAll("// @ts-expect-error", "// expected:"))
    try {
      const refused = (await check(unmarked)).stdout
      expect(refused).toContain("'emial' does not exist")
      expect(refused).toContain("'nmae' does not exist")
      expect(refused).toContain("'limt' does not exist")
      expect(refused).toContain("'email' does not exist in type '{ readonly username: string; }")
      expect(refused).toMatch(/TS2367: .*'"AuthenticationEror"' have no overlap/)
      // A refusal on the line after each mark, and on no other line.
      const refusedLines = [...refused.matchAll(/\.client-types-unmarked\.ts\((\d+),\d+\): error TS/g)].map(
        ([, line]) => Number(line)
      )
      const markedLines = readFileSync(app, "utf8")
        .split("\n")
        .flatMap((line, index) => (line.trim().startsWith("// @ts-expect-error") ? [index + 2] : []))
      expect(markedLines.length).toBe(6)
      expect([...new Set(refusedLines)]).toEqual(markedLines)
    } finally {
      rmSync(unmarked, { force: true })
    }
  })
})
