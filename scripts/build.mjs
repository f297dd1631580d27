#!/usr/bin/env node
// Builds the sources into dist/: esbuild transpiles them for a checkout's own runs, tsc compiles
// them with declarations for a package (both dev dependencies: a checkout builds, an installed
// package ships dist/ and never does).
// Usage: node scripts/build.mjs [--if-stale | --clean]
//   --if-stale  compile only when a source changed since the last build. An unchanged checkout
//               then costs a walk over the sources' timestamps instead of starting tsc, which is
//               what makes `npm start` start at once.
//   --clean     remove dist/ first, so that nothing of a deleted source is left (npm pack).
import { spawnSync } from "node:child_process"
import { chmodSync, readdirSync, readFileSync, rmSync, statSync, utimesSync, writeFileSync } from "node:fs"
import { createRequire } from "node:module"
import { join } from "node:path"
import { fileURLToPath, pathToFileURL } from "node:url"

const root = fileURLToPath(new URL("..", import.meta.url))
const project = "tsconfig.build.json"
const dist = join(root, "dist")
/** Written after each build, dated when that build began: whatever changed later is newer. */
const stamp = join(dist, ".build-stamp")

/** What the build reads: the project's sources and its configuration. */
const inputs = () => {
  const { include, compilerOptions } = JSON.parse(readFileSync(join(root, project), "utf8"))
  return {
    paths: [...include, project, "tsconfig.json", "package.json"],
    buildInfo: join(root, compilerOptions.tsBuildInfoFile)
  }
}

/**
 * The latest change under `path`, in ms. A folder's own time counts: it moves when an entry is
 * added, removed or renamed, which the files left behind would not show.
 */
const latestChange = (path) => {
  const stats = statSync(path, { throwIfNoEntry: false })
  if (stats === undefined) return 0
  if (!stats.isDirectory()) return stats.mtimeMs
  return readdirSync(path).reduce((latest, entry) => Math.max(latest, latestChange(join(path, entry))), stats.mtimeMs)
}

const builtAt = () => {
  try {
    return statSync(stamp).mtimeMs
  } catch {
    return undefined
  }
}

/** Whether a source changed since the last build, or there was none. */
export const isStale = () => {
  const built = builtAt()
  return built === undefined || inputs().paths.some((path) => latestChange(join(root, path)) > built)
}

/** The TypeScript sources the build reads (no declarations, no tests). */
const sources = (path) => {
  const stats = statSync(path, { throwIfNoEntry: false })
  if (stats === undefined) return []
  if (!stats.isDirectory()) return path.endsWith(".ts") && !path.endsWith(".d.ts") ? [path] : []
  return readdirSync(path).flatMap((entry) => sources(join(path, entry)))
}

/**
 * Each source to JavaScript with esbuild, file for file (no bundle, no type check: `npm run
 * lint` checks types): a cold `npm start` and the suite's set-up wait about a second for it,
 * where tsc took many. Answers an exit status.
 */
const transpile = () => {
  const esbuild = createRequire(import.meta.url)("esbuild")
  const { include } = JSON.parse(readFileSync(join(root, project), "utf8"))
  try {
    esbuild.buildSync({
      entryPoints: include.flatMap((entry) => sources(join(root, entry))),
      outdir: dist,
      outbase: root,
      format: "esm",
      platform: "node",
      target: "node20",
      sourcemap: true,
      logLevel: "warning"
    })
    return 0
  } catch {
    // esbuild printed what it could not read.
    return 1
  }
}

/** tsc, for a package: the JavaScript and the declarations its types entries name. */
const compile = () => {
  // tsc --incremental trusts its build info and emits nothing for files it thinks unchanged,
  // even when their output is gone: without a stamp, dist/ is not known to be whole.
  if (builtAt() === undefined) rmSync(inputs().buildInfo, { force: true })
  const tsc = createRequire(import.meta.url).resolve("typescript/bin/tsc")
  return spawnSync(process.execPath, [tsc, "-p", project], { cwd: root, stdio: "inherit" }).status ?? 1
}

/**
 * The package's commands (package.json `bin`) made executable: tsc and esbuild write files as
 * plain ones, and a command that lost its bit fails with "Permission denied" where npm linked it
 * (`npx portcullis` in a checkout after `npm pack`).
 */
const markCommands = () => {
  const { bin = {} } = JSON.parse(readFileSync(join(root, "package.json"), "utf8"))
  for (const path of typeof bin === "string" ? [bin] : Object.values(bin)) {
    const file = join(root, path)
    if (statSync(file, { throwIfNoEntry: false }) !== undefined) chmodSync(file, 0o755)
  }
}

/**
 * Builds dist/: transpiled for a checkout's own runs, compiled with declarations by `--clean`
 * (npm pack, whose package carries types). Answers the exit status.
 */
export const build = ({ clean = false } = {}) => {
  const began = new Date()
  if (clean) rmSync(dist, { recursive: true, force: true })
  const status = clean ? compile() : transpile()
  if (status !== 0) return status
  markCommands()
  writeFileSync(stamp, `${began.toISOString()}\n`)
  utimesSync(stamp, began, began)
  return 0
}

/** Compiles when a source changed since the last build; answers tsc's exit status, 0 when nothing was to do. */
export const buildIfStale = () => (isStale() ? build() : 0)

if (import.meta.url === pathToFileURL(process.argv[1] ?? "").href) {
  const option = process.argv[2]
  if (option !== undefined && option !== "--if-stale" && option !== "--clean") {
    process.stderr.write(`build.mjs: unknown option ${option}; expected --if-stale or --clean\n`)
    process.exit(2)
  }
  process.exitCode = option === "--if-stale" ? buildIfStale() : build({ clean: option === "--clean" })
}
