#!/usr/bin/env node
// How long a newcomer waits (bench/README.md, "Start-up: the latest run"): `npm start` from a checkout without
// dist/ (cold: the build included) and with it (warm), each until /healthz answers 200, and two
// CLI calls to their exit (`check`, which reads every setting, and `user list`, which opens the
// store). Runs each BENCH_STARTUP_RUNS times (5) in turn and prints the medians as JSON.
// Usage: node bench/startup.mjs   (on an idle machine: it measures the machine too)
import { spawn, spawnSync } from "node:child_process"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"

const root = fileURLToPath(new URL("..", import.meta.url))
const runs = Number(process.env.BENCH_STARTUP_RUNS ?? 5)
const folder = mkdtempSync(join(tmpdir(), "portcullis-startup-"))
const env = {
  PATH: process.env.PATH,
  HOME: process.env.HOME,
  PORTCULLIS_IGNORE_DOTENV: "1",
  SERVICE_SECRET_KEY: "startup-bench-secret-key-of-at-least-32-bytes",
  SERVICE_DATABASE_URL: `sqlite:${join(folder, "db.sqlite")}`,
  SERVICE_LOG_LEVEL: "warning"
}

const median = (values) => {
  const sorted = [...values].sort((a, b) => a - b)
  return sorted[Math.floor(sorted.length / 2)]
}

/** `npm start` until /healthz answers 200; its seconds. */
const serveUntilHealthy = async (port) => {
  const began = performance.now()
  const child = spawn("npm", ["start"], {
    cwd: root,
    env: { ...env, SERVICE_PORT: String(port) },
    stdio: "ignore",
    detached: true
  })
  try {
    for (;;) {
      if (child.exitCode !== null) throw new Error(`npm start exited with ${child.exitCode}`)
      try {
        const response = await fetch(`http://127.0.0.1:${port}/healthz`)
        if (response.status === 200) return (performance.now() - began) / 1000
      } catch {
        // Not listening yet.
      }
      await new Promise((resolve) => setTimeout(resolve, 25))
    }
  } finally {
    process.kill(-child.pid, "SIGTERM")
    await new Promise((resolve) => child.once("exit", resolve))
  }
}

/** A CLI call to its exit; its seconds. */
const cli = (args) => {
  const began = performance.now()
  const { status } = spawnSync(process.execPath, [join(root, "dist/main/cli.js"), ...args], {
    cwd: root,
    env,
    stdio: "ignore"
  })
  if (status !== 0) throw new Error(`portcullis ${args.join(" ")} exited with ${status}`)
  return (performance.now() - began) / 1000
}

const times = { cold: [], warm: [], check: [], userList: [] }
for (let run = 0; run < runs; run++) {
  rmSync(join(root, "dist"), { recursive: true, force: true })
  times.cold.push(await serveUntilHealthy(19_700 + run))
  times.warm.push(await serveUntilHealthy(19_750 + run))
  times.check.push(cli(["check"]))
  times.userList.push(cli(["user", "list"]))
}
rmSync(folder, { recursive: true, force: true })
const result = Object.fromEntries(
  Object.entries(times).map(([name, values]) => [name, { median: median(values), runs: values }])
)
process.stdout.write(`${JSON.stringify({ date: new Date().toISOString(), runs, seconds: result }, null, 2)}\n`)
