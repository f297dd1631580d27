import { execFile } from "node:child_process"
import {
  chmodSync,
  copyFileSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  statSync,
  symlinkSync,
  utimesSync,
  writeFileSync
} from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { root } from "../support/processes.js"

/**
 * scripts/build.mjs on a project of two small files beside the repository's tsconfig files and
 * node_modules: the real script and the real tsc, without touching the repository's own dist/.
 */
let project = ""

/** Runs the script to its end; asynchronously, since tsc takes long enough to starve vitest's worker. */
const build = (...args: ReadonlyArray<string>) =>
  new Promise<void>((resolve, reject) =>
    execFile(
      process.execPath,
      [join(project, "scripts/build.mjs"), ...args],
      { cwd: project, timeout: 60_000 },
      (error, stdout, stderr) =>
        error === null ? resolve() : reject(new Error(`${error.message}\n${stdout}${stderr}`))
    )
  )

const source = (path: string, text: string) => {
  mkdirSync(join(project, path, ".."), { recursive: true })
  writeFileSync(join(project, path), text)
}

const output = (path: string) => join(project, "dist", path)
const builtAt = (path: string) => statSync(output(path)).mtimeMs

/** Moves a file's time a second past everything built, as an edit after the build would. */
const touchLater = (path: string) => {
  const later = new Date(statSync(join(project, "dist/.build-stamp")).mtimeMs + 1_000)
  utimesSync(join(project, path), later, later)
}

beforeAll(() => {
  project = mkdtempSync(join(tmpdir(), "portcullis-build-"))
  for (const file of ["tsconfig.json", "tsconfig.build.json", "scripts/build.mjs"]) {
    mkdirSync(join(project, file, ".."), { recursive: true })
    copyFileSync(join(root, file), join(project, file))
  }
  symlinkSync(join(root, "node_modules"), join(project, "node_modules"))
  writeFileSync(join(project, "package.json"), '{ "type": "module", "bin": { "tool": "dist/index.js" } }\n')
  source("index.ts", 'export const version = "1"\n')
  source("config/extra.ts", "export const extra = 1\n")
})

afterAll(() => {
  if (project !== "") rmSync(project, { recursive: true, force: true })
})

// Each test runs tsc up to three times; on a busy machine one run takes seconds.
describe("scripts/build.mjs", { timeout: 120_000 }, () => {
  it("compiles when there is no build yet, then not again until a source changes", async () => {
    await build("--if-stale")
    expect(readFileSync(output("index.js"), "utf8")).toContain('"1"')
    const first = builtAt("index.js")

    await build("--if-stale")
    expect(builtAt("index.js")).toBe(first)

    source("index.ts", 'export const version = "2"\n')
    touchLater("index.ts")
    await build("--if-stale")
    expect(readFileSync(output("index.js"), "utf8")).toContain('"2"')
  })

  it("compiles when a source is deleted: only its folder's time tells", async () => {
    source("config/doomed.ts", "export const doomed = 1\n")
    await build("--if-stale")
    const stamped = builtAt(".build-stamp")
    rmSync(join(project, "config/doomed.ts"))
    touchLater("config")
    await build("--if-stale")
    expect(builtAt(".build-stamp")).toBeGreaterThan(stamped)
  })

  it("rebuilds a deleted dist/ whole, though tsc's own build info says nothing changed", async () => {
    await build("--if-stale")
    rmSync(join(project, "dist"), { recursive: true })
    await build("--if-stale")
    expect(existsSync(output("index.js"))).toBe(true)
    expect(existsSync(output("config/extra.js"))).toBe(true)
  })

  it("leaves the package's commands executable whichever way it builds (a checkout's, npm pack's)", async () => {
    const mode = () => statSync(output("index.js")).mode & 0o777
    for (const args of [[], ["--clean"], ["--if-stale"]]) {
      if (existsSync(output("index.js"))) chmodSync(output("index.js"), 0o644)
      source("index.ts", `export const version = "${args.join("") || "plain"}"\n`)
      touchLater("index.ts")
      await build(...args)
      expect(mode(), args.join(" ")).toBe(0o755)
    }
  })

  it("--clean leaves nothing of a deleted source", async () => {
    await build()
    expect(existsSync(output("config/extra.js"))).toBe(true)
    rmSync(join(project, "config/extra.ts"))
    await build("--clean")
    expect(existsSync(output("config/extra.js"))).toBe(false)
    expect(existsSync(output("index.js"))).toBe(true)
  })
})
