#!/usr/bin/env node
// Completes package-lock.json with the per-platform optional packages that a registry serving
// only some platforms left out (the native builds of biome, @node-rs/*, rollup, ...). `npm ci`
// refuses a lockfile that names an optional dependency without an entry for it; with the entry
// (os, cpu, libc) it skips the package on other platforms without fetching it.
// Usage: node scripts/complete-lockfile.mjs [package-lock.json]
import { readFileSync, writeFileSync } from "node:fs"

const file = process.argv[2] ?? "package-lock.json"
const lock = JSON.parse(readFileSync(file, "utf8"))
const systems = ["android", "darwin", "linux", "win32", "freebsd", "openbsd", "openharmony", "netbsd", "sunos", "aix"]
const cpus = ["arm64", "x64", "arm", "ia32", "loong64", "ppc64", "riscv64", "s390x", "mips64el"]

const added = []
for (const [path, entry] of Object.entries(lock.packages)) {
  for (const [name, version] of Object.entries(entry.optionalDependencies ?? {})) {
    const key = `node_modules/${name}`
    if (key in lock.packages || `${path}/${key}` in lock.packages) continue
    const base = name.split("/").at(-1)
    const os = systems.find((system) => new RegExp(`(^|-)${system}(-|$)`).test(base))
    const cpu = cpus.find((arch) => new RegExp(`-${arch}(-|$)`).test(base))
    if (os === undefined || cpu === undefined) {
      console.error(`left alone: ${name} (no platform in its name)`)
      continue
    }
    lock.packages[key] = {
      version,
      ...(entry.dev ? { dev: true } : {}),
      cpu: [cpu],
      license: entry.license ?? "MIT",
      optional: true,
      os: [os],
      ...(os === "linux" ? { libc: [base.includes("musl") ? "musl" : "glibc"] } : {})
    }
    added.push(key)
  }
}
lock.packages = Object.fromEntries(Object.entries(lock.packages).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)))
writeFileSync(file, `${JSON.stringify(lock, null, 2)}\n`)
console.error(`${added.length} optional platform entries added`)
