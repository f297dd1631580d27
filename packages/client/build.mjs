#!/usr/bin/env node
// Builds @portcullis/client into dist/: the Promise client (index.js, fetch alone); the Effect
// client (effect.js, bundling the service's HttpApi definition and the domain schemas it needs,
// with effect and @effect/platform left to the app); the resource-server helper; and the
// declarations tsc emits for that same graph, so that both clients' types stay derived.
// Usage: node build.mjs [--outdir <folder>] [--no-types]   (dist/ of this package unless told)
import { spawnSync } from "node:child_process"
import { rmSync, writeFileSync } from "node:fs"
import { createRequire } from "node:module"
import { join, resolve } from "node:path"
import { fileURLToPath, pathToFileURL } from "node:url"

const here = fileURLToPath(new URL(".", import.meta.url))
const require = createRequire(import.meta.url)

/** An esbuild plugin that fails the build on any package import: the Promise client's entry loads none. */
const importsNothing = {
  name: "imports-nothing",
  setup(build) {
    build.onResolve({ filter: /^[^./]/ }, (args) => ({
      errors: [{ text: `the Promise client loads no package at run time, but ${args.importer} imports ${args.path}` }]
    }))
  }
}

/** Bundles the modules and emits its declarations into `outdir`; answers an exit status. */
export const build = async ({ outdir = join(here, "dist"), declarations = true } = {}) => {
  rmSync(outdir, { recursive: true, force: true })
  const esbuild = await import(pathToFileURL(require.resolve("esbuild")).href)
  const common = {
    bundle: true,
    format: "esm",
    platform: "neutral",
    target: "es2022",
    sourcemap: true,
    logLevel: "warning"
  }
  // The Promise client: fetch alone. Its types come from the HttpApi definition as types only, so a
  // module it would load at run time is a mistake this build refuses rather than bundles.
  await esbuild.build({
    ...common,
    entryPoints: [join(here, "src/index.ts")],
    outfile: join(outdir, "index.js"),
    plugins: [importsNothing]
  })
  // The Effect client, with the definition and the domain schemas it needs bundled in. Neutral: the
  // same file runs in browsers, Node, Deno and workers. effect and @effect/platform are the peers
  // an app shares with its own Effect code (a package path marks its subpaths too).
  await esbuild.build({
    ...common,
    entryPoints: [join(here, "src/effect.ts")],
    outfile: join(outdir, "effect.js"),
    external: ["effect", "@effect/platform"]
  })
  // The resource-server helper: an entry of its own, so that only those who guard an API load jose.
  await esbuild.build({
    ...common,
    entryPoints: [join(here, "src/resource-server.ts")],
    outfile: join(outdir, "resource-server.js"),
    external: ["jose", "effect"]
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
  for (const entry of ["effect", "resource-server"])
    writeFileSync(join(outdir, `${entry}.d.ts`), `export * from "./types/packages/client/src/${entry}.js"\n`)
  return 0
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? "").href) {
  const at = process.argv.indexOf("--outdir")
  const outdir = at === -1 ? undefined : resolve(process.argv[at + 1] ?? "")
  const declarations = !process.argv.includes("--no-types")
  process.exitCode = await build(outdir === undefined ? { declarations } : { outdir, declarations })
}
