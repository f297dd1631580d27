// `node bench/ab.mjs [variant…] [-- route…]`: every kept optimisation against the plain path, on
// today's code, in one in-process run (bench/inprocess.mjs). Each variant is a patch in bench/ab/
// that takes one optimisation out (its first line says which); it is applied to a copy of this
// checkout's HEAD (a git worktree), built there, and composed beside this checkout's own build in
// one process, their rounds alternating (BENCH_ROUNDS, 3; median round of each), one variant at a
// time. Routes: me and refresh by default. Prints each build's CPU a request; BENCHMARKS.md "Kept optimisations"
// holds the latest table. The route `under-logins` runs bench/under-logins.mjs instead (GET /me's
// p99 while sign-ins saturate the cores), for an optimisation that buys latency rather than CPU.
import { execFileSync, spawnSync } from "node:child_process"
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, symlinkSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"

const root = fileURLToPath(new URL("..", import.meta.url))
const args = process.argv.slice(2)
const split = args.indexOf("--")
const named = split < 0 ? args : args.slice(0, split)
const routes = split < 0 ? ["me", "refresh"] : args.slice(split + 1)
const patches = readdirSync(join(root, "bench/ab")).filter((file) => file.endsWith(".patch"))
const chosen = named.length === 0 ? patches : patches.filter((file) => named.includes(file.replace(/\.patch$/, "")))

const work = join(tmpdir(), "portcullis-ab")
rmSync(work, { recursive: true, force: true })
mkdirSync(work, { recursive: true })
const run = (command, commandArgs, cwd) =>
  execFileSync(command, commandArgs, { cwd, stdio: ["ignore", "ignore", "inherit"] })

run(process.execPath, ["scripts/build.mjs", "--if-stale"], root)
const builds = [{ name: "kept (this checkout)", dist: join(root, "dist/") }]
for (const patch of chosen) {
  const name = patch.replace(/\.patch$/, "")
  const tree = join(work, name)
  run("git", ["worktree", "add", "--detach", "--quiet", tree, "HEAD"], root)
  symlinkSync(join(root, "node_modules"), join(tree, "node_modules"))
  run("git", ["apply", join(root, "bench/ab", patch)], tree)
  run(process.execPath, ["scripts/build.mjs"], tree)
  builds.push({ name, dist: join(tree, "dist/") })
  process.stderr.write(
    `${name}: ${readFileSync(join(root, "bench/ab", patch), "utf8")
      .split("\n")[0]
      .replace(/^# /, "")}\n`
  )
}

/** One in-process run of `routes` over these builds, their rounds alternating; its lines, by build name. */
const compare = (compared) => {
  const underLogins = routes.includes("under-logins")
  const script = underLogins ? ["bench/under-logins.mjs"] : ["bench/inprocess.mjs", ...routes]
  const result = spawnSync(process.execPath, [join(root, script[0]), ...script.slice(1)], {
    cwd: root,
    env: { ...process.env, BENCH_DIST: compared.map((build) => build.dist).join(",") },
    stdio: ["ignore", "ignore", "pipe"],
    encoding: "utf8"
  })
  if (result.status !== 0) process.stderr.write(result.stderr)
  const wanted = underLogins ? / me p99 under logins / : / µs CPU a request/
  for (const line of result.stderr.split("\n").filter((text) => wanted.test(text))) {
    const build = compared.find((candidate) => line.includes(candidate.dist))
    process.stdout.write(`${line.replace(build?.dist ?? "", build?.name ?? "?")}\n`)
  }
  return result.status ?? 1
}

// Each variant beside the kept build alone (AB_TOGETHER=1: all in one process): a process holding
// many builds pays for them all in its collector, which blurs a difference of a tenth.
let status = 0
if (process.env.AB_TOGETHER === "1") status = compare(builds)
else for (const variant of builds.slice(1)) status ||= compare([builds[0], variant])
for (const build of builds.slice(1)) {
  const tree = join(build.dist, "..")
  if (existsSync(tree)) run("git", ["worktree", "remove", "--force", tree], root)
}
process.exitCode = status
