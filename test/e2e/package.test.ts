import { type ChildProcess, spawn, spawnSync } from "node:child_process"
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, symlinkSync } from "node:fs"
import { rm } from "node:fs/promises"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, describe, expect, it } from "vitest"
import { cleanEnv, exited, freePort, root } from "../support/processes.js"

/**
 * The package as a user gets it: `npm pack` (its prepack build included) on a copy of the
 * checkout, the tarball installed with `npm install --omit=dev` into an empty folder, and
 * `npx portcullis serve` answering /healthz. Slow (the install compiles better-sqlite3) and it
 * needs the npm registry: skipped when the registry does not answer, unless
 * TEST_REQUIRE_REGISTRY=1 (.ci/run sets it), which turns the skip into a failure.
 *
 * better-sqlite3's install fetches a prebuilt binary from GitHub, which these machines cannot
 * reach, and then compiles SQLite from source for minutes. The binary this checkout already has
 * is offered as that download instead (prebuild-install's local prebuilds), so the install takes
 * the path a user's does; a version it does not match is still compiled.
 */

const required = process.env.TEST_REQUIRE_REGISTRY === "1"
const reachable = spawnSync("npm", ["ping"], { stdio: "ignore", timeout: 20_000 }).status === 0
const title =
  reachable || required
    ? "the packed tarball, installed with --omit=dev"
    : "the packed tarball: skipped, the npm registry does not answer (TEST_REQUIRE_REGISTRY=1 makes this a failure)"

let scratch = ""
let server: ChildProcess | undefined

afterAll(async () => {
  if (server?.pid !== undefined && server.exitCode === null && server.signalCode === null) {
    // npx runs the command under a shell of its own: the group holds the server.
    process.kill(-server.pid, "SIGKILL")
    await exited(server, 5_000).catch(() => undefined)
  }
  // Asynchronous: the installed tree is large, and a synchronous removal stalls vitest's worker.
  if (scratch !== "") await rm(scratch, { recursive: true, force: true })
}, 120_000)

/** Runs a command to its end, resolving with its output, rejecting with it on a non-zero exit. */
const run = (command: string, args: ReadonlyArray<string>, cwd: string, vars: Readonly<Record<string, string>> = {}) =>
  new Promise<string>((resolve, reject) => {
    const child = spawn(command, args, { cwd, env: cleanEnv(vars), stdio: ["ignore", "pipe", "pipe"] })
    let output = ""
    child.stdout?.on("data", (chunk: Buffer) => {
      output += chunk.toString("utf8")
    })
    child.stderr?.on("data", (chunk: Buffer) => {
      output += chunk.toString("utf8")
    })
    child.once("close", (code) =>
      code === 0 ? resolve(output) : reject(new Error(`${command} ${args.join(" ")} exited ${code}:\n${output}`))
    )
  })

/**
 * A folder holding this checkout's better-sqlite3 binary as the prebuilt download its install
 * looks for (named as on its release page), and the variable that points the install there.
 */
const localPrebuilds = async () => {
  const folder = join(scratch, "prebuilds")
  mkdirSync(folder)
  const module = join(root, "node_modules", "better-sqlite3")
  const { version } = JSON.parse(readFileSync(join(module, "package.json"), "utf8")) as { version: string }
  const name = `better-sqlite3-v${version}-node-v${process.versions.modules}-${process.platform}-${process.arch}.tar.gz`
  await run("tar", ["czf", join(folder, name), "build/Release/better_sqlite3.node"], module)
  return { npm_config_better_sqlite3_local_prebuilds: folder }
}

/** What `npm pack` needs of the checkout: the build's inputs and what the package ships besides dist/. */
const checkoutCopy = () => {
  const copy = join(scratch, "checkout")
  mkdirSync(copy)
  const { include } = JSON.parse(readFileSync(join(root, "tsconfig.build.json"), "utf8")) as { include: string[] }
  const files = [
    "package.json",
    "tsconfig.json",
    "tsconfig.build.json",
    "scripts",
    "README.md",
    "CHANGELOG.md",
    "SECURITY.md",
    "docs"
  ]
  for (const entry of [...include, ...files]) cpSync(join(root, entry), join(copy, entry), { recursive: true })
  // The dev dependencies the prepack build needs, without installing them again.
  symlinkSync(join(root, "node_modules"), join(copy, "node_modules"))
  return copy
}

describe.skipIf(!reachable && !required)(title, () => {
  it("packs the compiled service, installs without dev dependencies and serves with npx portcullis serve", {
    timeout: 1_200_000
  }, async () => {
    if (!reachable) throw new Error("TEST_REQUIRE_REGISTRY=1 but the npm registry does not answer (npm ping)")
    scratch = mkdtempSync(join(tmpdir(), "portcullis-package-"))

    await run("npm", ["pack", "--pack-destination", scratch], checkoutCopy())
    const tarball = join(scratch, "portcullis-0.2.0.tgz")
    const listing = (await run("tar", ["tzf", tarball], scratch)).split("\n").filter((line) => line !== "")
    expect(listing).toContain("package/dist/main/cli.js")
    expect(listing).toContain("package/dist/index.d.ts")
    expect(listing.filter((path) => path.endsWith(".ts") && !path.endsWith(".d.ts"))).toEqual([])
    expect(listing.filter((path) => /^package\/(test|scripts|bench)\/|\.build-stamp$/.test(path))).toEqual([])

    const app = join(scratch, "app")
    mkdirSync(app)
    await run(
      "npm",
      ["install", "--omit=dev", "--no-audit", "--no-fund", "--prefer-offline", tarball],
      app,
      await localPrebuilds()
    )
    for (const devDependency of ["typescript", "vitest", "@biomejs/biome"]) {
      expect(existsSync(join(app, "node_modules", devDependency))).toBe(false)
    }

    const port = await freePort()
    const started = spawn("npx", ["portcullis", "serve"], {
      cwd: app,
      env: cleanEnv({ SERVICE_PORT: String(port), SERVICE_SECRET_KEY: "package-test-secret-key-of-32-bytes-or-more" }),
      stdio: ["ignore", "pipe", "pipe"],
      detached: true
    })
    server = started
    let output = ""
    for (const stream of [started.stdout, started.stderr]) {
      stream?.on("data", (chunk: Buffer) => {
        output += chunk.toString("utf8")
      })
    }
    const deadline = Date.now() + 60_000
    let status = 0
    while (status !== 200 && Date.now() < deadline && started.exitCode === null) {
      status = await fetch(`http://127.0.0.1:${port}/healthz`, { signal: AbortSignal.timeout(1_000) }).then(
        (response) => response.status,
        () => 0
      )
      if (status !== 200) await new Promise((resolve) => setTimeout(resolve, 200))
    }
    expect(status, output).toBe(200)
    // The embedded default: the SQLite file in ./data of the working directory.
    expect(existsSync(join(app, "data", "portcullis.db"))).toBe(true)

    // npx's shell would not pass SIGTERM on (README: Running in production): the group gets it.
    if (started.pid !== undefined) process.kill(-started.pid, "SIGTERM")
    // Closed once every holder of its output, the server included, has exited.
    await new Promise((resolve) => started.once("close", resolve))
    expect(output).toContain("stopped: drained 0 in-flight requests")
  })
})
