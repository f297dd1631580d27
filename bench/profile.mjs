// `npm run bench:profile [-- sqlite|pg]`: CPU profiles of GET /me and POST /refresh under load
// (wrk, as `npm run bench` loads them), one worker, on a SQLite file or on PostgreSQL + Redis
// (TEST_DATABASE_URL, TEST_REDIS_URL; a schema of its own, dropped after). Each route is loaded
// once to warm up, then once more with the profiler on (bench/cpu-profile.mjs, toggled by
// SIGUSR2, so the profile holds that load alone). Prints, per route, the share of the samples
// each owner took (ours, each package, Node, the garbage collector, idle) and the ten heaviest
// frames by self time of ours and of the libraries'; writes the profiles to
// .cache/profiles/<store>-<route>.cpuprofile (open them in Chrome's DevTools).
import { execFileSync } from "node:child_process"
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync } from "node:fs"
import { tmpdir } from "node:os"
import { join, relative } from "node:path"
import { benchDir, log, measure, openPortcullis, root, run, sleep } from "./harness.mjs"

const store = process.argv[2] ?? "sqlite"
const profiles = join(tmpdir(), `portcullis-profiles-${run}`)
const kept = join(root, ".cache/profiles")

/** Who a frame belongs to: ours (the build), a package, Node itself, or V8's own entries. */
const ownerOf = ({ url, functionName }) => {
  if (url === "") return functionName.startsWith("(") ? functionName : "node"
  const inPackage = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url)
  if (inPackage) return inPackage[1]
  if (url.startsWith("node:")) return "node"
  return url.includes("/dist/") ? "ours" : "node"
}

const frameName = ({ functionName, url, lineNumber }) => {
  const where =
    url === ""
      ? ""
      : ` ${relative(root, url.replace(/^file:\/\//, "")).replace(/^node_modules\//, "")}:${lineNumber + 1}`
  return `${functionName || "(anonymous)"}${where}`
}

/** Self time by owner and by frame, as shares of the profile's samples. */
const summarise = (profile) => {
  const byId = new Map(profile.nodes.map((node) => [node.id, node]))
  const self = new Map()
  profile.samples.forEach((id, index) => {
    self.set(id, (self.get(id) ?? 0) + (profile.timeDeltas[index] ?? 0))
  })
  const total = [...self.values()].reduce((sum, value) => sum + value, 0)
  const owners = new Map()
  const frames = new Map()
  for (const [id, time] of self) {
    const frame = byId.get(id)?.callFrame
    if (frame === undefined) continue
    const owner = ownerOf(frame)
    owners.set(owner, (owners.get(owner) ?? 0) + time)
    const name = frameName(frame)
    const known = frames.get(name) ?? { owner, time: 0 }
    frames.set(name, { owner, time: known.time + time })
  }
  const share = (time) => Math.round((time / total) * 1000) / 10
  const heaviest = (keep) =>
    [...frames]
      .filter(([, { owner }]) => keep(owner))
      .sort((a, b) => b[1].time - a[1].time)
      .slice(0, 10)
      .map(([name, { owner, time }]) => ({ frame: name, owner, percent: share(time) }))
  return {
    owners: Object.fromEntries([...owners].sort((a, b) => b[1] - a[1]).map(([owner, time]) => [owner, share(time)])),
    ours: heaviest((owner) => owner === "ours"),
    libraries: heaviest((owner) => owner !== "ours" && !owner.startsWith("(") && owner !== "node")
  }
}

const profiled = async (server, route, name) => {
  await measure(server, route)
  process.kill(server.pid, "SIGUSR2")
  const figures = await measure(server, route)
  process.kill(server.pid, "SIGUSR2")
  for (let wait = 0; wait < 100 && !readdirSync(profiles).some((file) => file.endsWith(".cpuprofile")); wait++)
    await sleep(100)
  const [file] = readdirSync(profiles).filter((entry) => entry.endsWith(".cpuprofile"))
  if (file === undefined) throw new Error(`no profile was written for ${name}`)
  const target = join(kept, `${store}-${name}.cpuprofile`)
  renameSync(join(profiles, file), target)
  return { figures, summary: summarise(JSON.parse(readFileSync(target, "utf8"))) }
}

const main = async () => {
  execFileSync("npm", ["run", "build", "--silent"], { cwd: root, stdio: "inherit" })
  mkdirSync(profiles, { recursive: true })
  mkdirSync(kept, { recursive: true })
  const nodeArgs = ["--import", join(benchDir, "cpu-profile.mjs")]
  const env = { BENCH_PROFILE_DIR: profiles }
  let cleanup = () => {}
  if (store === "pg") {
    const { TEST_DATABASE_URL: pg, TEST_REDIS_URL: redis } = process.env
    if (!pg || !redis) throw new Error("bench:profile pg needs TEST_DATABASE_URL and TEST_REDIS_URL")
    const schema = `portcullis_profile_${run}`
    execFileSync("psql", [pg, "-q", "-c", `CREATE SCHEMA ${schema}`])
    cleanup = () =>
      execFileSync("psql", [pg, "-q", "-c", `SET client_min_messages = warning; DROP SCHEMA ${schema} CASCADE`])
    const url = new URL(pg)
    url.searchParams.set("options", `-c search_path=${schema}`)
    Object.assign(env, { SERVICE_DATABASE_URL: url.toString(), SERVICE_REDIS_URL: redis })
  } else {
    Object.assign(env, { SERVICE_DATABASE_URL: `sqlite:${join(profiles, "portcullis.db")}` })
  }
  try {
    const { server, routes } = await openPortcullis(`portcullis ${store}`, env, join(root, "dist/"), nodeArgs)
    try {
      const report = {}
      for (const name of ["me", "refresh"]) report[name] = await profiled(server, routes[name], name)
      for (const [name, { figures, summary }] of Object.entries(report)) {
        log(`\n${store} ${name}: ${figures.requests_per_second} req/s, ${figures.cpu_us_per_request} µs a request`)
        log(`  owners (% of samples): ${JSON.stringify(summary.owners)}`)
        log("  ours:")
        for (const row of summary.ours) log(`    ${String(row.percent).padStart(5)}%  ${row.frame}`)
        log("  libraries:")
        for (const row of summary.libraries)
          log(`    ${String(row.percent).padStart(5)}%  ${row.owner.padEnd(18)} ${row.frame}`)
      }
      log(`\nprofiles in ${relative(root, kept)}/`)
    } finally {
      await server.stop()
    }
  } finally {
    cleanup()
  }
}

if (!existsSync(join(root, "node_modules"))) throw new Error("npm install first")
main().catch((error) => {
  console.error(error)
  process.exit(1)
})
