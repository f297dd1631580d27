#!/usr/bin/env node
// Builds @portcullis/client into dist/: one ES module bundling the client with the service's
// HttpApi definition and the domain schemas it needs (from the repository's interfaces/http and
// domain), with effect and @effect/platform left as the package's only dependencies; and the
// declarations tsc emits for that same graph, so that the Effect client's types stay derived.
// Usage: node build.mjs [--outdir <folder>] [--no-types]   (dist/ of this package unless told)
import { spawnSync } from "node:child_process"
import { rmSync, writeFileSync } from "node:fs"
import { createRequire } from "node:module"
import { join, resolve } from "node:path"
import { fileURLToPath, pathToFileURL } from "node:url"

const here = fileURLToPath(new URL(".", import.meta.url))
const require = createRequire(import.meta.url)

/** Bundles the module and emits its declarations into `outdir`; answers an exit status. */
export const build = async ({ outdir = join(here, "dist"), declarations = true } = {}) => {
  rmSync(outdir, { recursive: true, force: true })
  const esbuild = await import(pathToFileURL(require.resolve("esbuild")).href)
  await esbuild.build({
    entryPoints: [join(here, "src/index.ts")],
    outfile: join(outdir, "index.js"),
    bundle: true,
    format: "esm",
    // Neutral: the same file runs in browsers, Node, Deno and workers; nothing of node: is bundled.
    platform: "neutral",
    target: "es2022",
    // The package's dependencies: an app shares them with its own Effect code, and a package
    // path marks its subpaths too (effect/Schema, @effect/platform/HttpApi…).
    external: ["effect", "@effect/platform"],
    sourcemap: true,
    logLevel: "warning"
  })
  // The resource-server helper: an entry of its own, so that only those who guard an API load jose.
  await esbuild.build({
    entryPoints: [join(here, "src/resource-server.ts")],
    outfile: join(outdir, "resource-server.js"),
    bundle: true,
    format: "esm",
    platform: "neutral",
    target: "es2022",
    external: ["jose", "effect"],
    sourcemap: true,
    logLevel: "warning"
  })
  if (!declarations) return 0
  const tsc = require.resolve("typescript/bin/tsc")
  const { status } = spawnSync(
    process.execPath,
    [tsc, "-p", join(here, "tsconfig.json"), "--outDir", join(outdir, "types")],
    { cwd: here, stdio: "inherit" }
  )
  if (status !== 0) return status ?? 1
  // tsc keeps the repository's layout under types/; the package's own entry names it once.
  writeFileSync(join(outdir, "index.d.ts"), 'export * from "./types/packages/client/src/index.js"\n')
  writeFileSync(
    join(outdir, "resource-server.d.ts"),
    'export * from "./types/packages/client/src/resource-server.js"\n'
  )
  return 0
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? "").href) {
  const at = process.argv.indexOf("--outdir")
  const outdir = at === -1 ? undefined : resolve(process.argv[at + 1] ?? "")
  const declarations = !process.argv.includes("--no-types")
  process.exitCode = await build(outdir === undefined ? { declarations } : { outdir, declarations })
}
