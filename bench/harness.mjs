// What the benchmarks share (`npm run bench`, `npm run bench:scale`): servers started and
// stopped, wrk loads with the server's CPU read from /proc around them, and the median round.
// BENCH_SECONDS (10) and BENCH_WARMUP (2) set each load's length; BENCH_ROUNDS (3) how many
// times each compared load is taken.
import { execFileSync, spawn } from "node:child_process"
import { randomBytes } from "node:crypto"
import { readdirSync, readFileSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { dirname, join } from "node:path"
import { fileURLToPath } from "node:url"

export const benchDir = dirname(fileURLToPath(import.meta.url))
export const root = dirname(benchDir)
export const seconds = Number(process.env.BENCH_SECONDS ?? 10)
export const warmup = Number(process.env.BENCH_WARMUP ?? 2)
export const rounds = Math.max(1, Number(process.env.BENCH_ROUNDS ?? 3))
export const secret = "bench-secret-key-with-at-least-32-bytes!"
export const password = "correct horse battery staple"
export const run = randomBytes(3).toString("hex")
export const ticksPerSecond = Number(execFileSync("getconf", ["CLK_TCK"]).toString().trim())
let nextPort = 18_000
/** A port no server of this run has had yet. */
export const freePort = () => nextPort++

export const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms))
export const log = (line) => process.stderr.write(`${line}\n`)

/** A process's CPU ticks from a `stat` file of /proc: user and system time. */
export const ticksIn = (path) => {
  const text = readFileSync(path, "utf8")
  const fields = text.slice(text.lastIndexOf(")") + 2).split(" ")
  return { ppid: Number(fields[1]), ticks: Number(fields[11]) + Number(fields[12]) }
}

/**
 * CPU ticks used so far by a process and all its descendants (a cluster's workers too): in all,
 * and on their main threads alone (each process's event loop; the rest is hashing threads,
 * libuv's pool and V8's helpers).
 */
export const treeTicks = (pid) => {
  const stats = new Map()
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue
    try {
      stats.set(Number(entry), ticksIn(`/proc/${entry}/stat`))
    } catch {
      // The process ended while the table was read.
    }
  }
  let total = 0
  let loops = 0
  const visit = (id) => {
    total += stats.get(id)?.ticks ?? 0
    try {
      loops += ticksIn(`/proc/${id}/task/${id}/stat`).ticks
    } catch {
      // The process ended meanwhile.
    }
    for (const [child, stat] of stats) if (stat.ppid === id) visit(child)
  }
  visit(pid)
  return { total, loops }
}

export const rssOf = (pid) => {
  const line = readFileSync(`/proc/${pid}/status`, "utf8")
    .split("\n")
    .find((text) => text.startsWith("VmRSS:"))
  return Number(line?.replace(/\D/g, "") ?? 0) * 1024
}

/** Starts a server and waits until it answers anything at `probe`. */
/** Every server a bench started and has not stopped: killed if the bench itself ends first (a failure). */
const running = new Set()
process.on("exit", () => {
  for (const child of running) child.kill("SIGKILL")
})

export const startServer = async (name, args, env, probe) => {
  // A developer's .env in the checkout never changes what a run measures.
  const child = spawn(process.execPath, args, {
    env: { ...process.env, PORTCULLIS_IGNORE_DOTENV: "1", ...env },
    stdio: ["ignore", "ignore", "pipe"]
  })
  running.add(child)
  child.on("exit", () => running.delete(child))
  let stderr = ""
  child.stderr.on("data", (chunk) => {
    stderr = (stderr + chunk).slice(-4000)
  })
  for (let tries = 0; tries < 300; tries++) {
    if (child.exitCode !== null) throw new Error(`${name} exited: ${stderr}`)
    try {
      await fetch(probe)
      return {
        pid: child.pid,
        stop: async () => {
          child.kill("SIGTERM")
          for (let wait = 0; wait < 50 && child.exitCode === null; wait++) await sleep(100)
          if (child.exitCode === null) child.kill("SIGKILL")
        }
      }
    } catch {
      await sleep(100)
    }
  }
  child.kill("SIGKILL")
  throw new Error(`${name} did not answer at ${probe}: ${stderr}`)
}

/** What `describe` answers of a server just started; the server is stopped if it fails. */
export const describing = async (server, describe) => {
  try {
    return await describe()
  } catch (error) {
    await server.stop()
    throw error
  }
}

/** A JSON POST; tried again once when a kept-alive connection turns out closed. */
export const post = async (url, body, headers = {}, retried = false) => {
  try {
    const response = await fetch(url, {
      method: "POST",
      headers: { "content-type": "application/json", ...headers },
      body: JSON.stringify(body)
    })
    return { status: response.status, headers: response.headers, body: await response.json().catch(() => undefined) }
  } catch (error) {
    if (retried) throw error
    return post(url, body, headers, true)
  }
}

let loads = 0

/** One wrk load; answers its summary. Each load registers addresses of its own (BENCH_RUN). */
export const wrk = (url, script, connections, duration, env) => {
  loads++
  const output = execFileSync(
    "wrk",
    [
      "-t",
      "2",
      "-c",
      String(connections),
      "-d",
      `${duration}s`,
      "--timeout",
      "10s",
      "-s",
      join(benchDir, "wrk", script),
      url
    ],
    {
      env: {
        ...process.env,
        BENCH_DIR: join(benchDir, "wrk"),
        BENCH_RUN: `${run}-${loads}`,
        BENCH_THREADS: "2",
        ...env
      }
    }
  ).toString()
  const line = output.split("\n").find((text) => text.startsWith("BENCH_RESULT "))
  if (line === undefined) throw new Error(`wrk printed no result:\n${output}`)
  // Scripts that count their answers' statuses (flood.lua) print them on a line of their own.
  const statuses = output.split("\n").find((text) => text.startsWith("BENCH_STATUSES "))
  return {
    ...JSON.parse(line.slice("BENCH_RESULT ".length)),
    ...(statuses === undefined ? {} : { statuses: JSON.parse(statuses.slice("BENCH_STATUSES ".length)) })
  }
}

/**
 * A route under load: a warm-up, then the measured load, with the server's CPU over it.
 * `prepare` runs before each of the two and answers extra wrk environment (fresh tokens).
 */
export const measure = async (server, route, duration = seconds) => {
  const { url, script, connections, env = {}, warmupEnv = {}, prepare = async () => ({}) } = route
  if (warmup > 0) wrk(url, script, connections, warmup, { ...env, ...warmupEnv, ...(await prepare()) })
  const prepared = { ...env, ...(await prepare()) }
  const before = treeTicks(server.pid)
  const summary = wrk(url, script, connections, duration, prepared)
  const after = treeTicks(server.pid)
  const cpuSeconds = (after.total - before.total) / ticksPerSecond
  const loopSeconds = (after.loops - before.loops) / ticksPerSecond
  const errors = summary.connect + summary.read + summary.write + summary.status + summary.timeout
  // A load whose answers are counted by status (the flood) is all answers, refusals included.
  const ok = summary.statuses === undefined ? summary.requests - errors : summary.requests
  // More than one answer in a hundred failed (a 401, a timeout): its figures measure failures, and
  // no ratio is drawn from it.
  const failed = summary.statuses === undefined && errors > summary.requests / 100
  if (failed) log(`  ${errors} of ${summary.requests} answers failed at ${url}: no ratio is drawn from this load`)
  return {
    requests: summary.requests,
    rss_after_load: rssOf(server.pid),
    requests_per_second: Math.round((summary.requests / summary.duration_us) * 1e6),
    p50_ms: summary.p50_us / 1000,
    p99_ms: summary.p99_us / 1000,
    errors,
    cpu_us_per_request: ok > 0 ? Math.round((cpuSeconds * 1e6) / summary.requests) : null,
    event_loop_cpu_us_per_request: ok > 0 ? Math.round((loopSeconds * 1e6) / summary.requests) : null,
    connections,
    ...(failed ? { failed } : {}),
    ...(summary.statuses === undefined ? {} : { statuses: summary.statuses })
  }
}

/** The round whose `key` is the middle one (the lower of the two middles of an even count). */
export const middleBy = (all, key) => [...all].sort((a, b) => a[key] - b[key])[Math.floor((all.length - 1) / 2)]

/** The round of middle throughput, with every round's requests a second beside its own figures. */
export const medianRound = (all) => ({
  ...middleBy(all, "requests_per_second"),
  rounds_requests_per_second: all.map((figures) => figures.requests_per_second)
})
/** Tokens for the refresh load: signed in `count` times, 8 at a time. */
export const mintRefreshTokens = async (loginUrl, body, count) => {
  const tokens = []
  while (tokens.length < count) {
    const batch = await Promise.all(Array.from({ length: 8 }, () => post(loginUrl, body)))
    for (const reply of batch) if (reply.status === 200) tokens.push(reply.body.refresh_token)
  }
  const file = join(tmpdir(), `portcullis-bench-tokens-${run}-${randomBytes(3).toString("hex")}`)
  writeFileSync(file, `${tokens.join("\n")}\n`)
  return file
}

/** A wrk process loading `route` in the background for `duration` seconds. */
export const background = (route, connections, duration) => {
  const flood = spawn(
    "wrk",
    ["-t", "1", "-c", String(connections), "-d", `${duration}s`, "-s", join(benchDir, "wrk", route.script), route.url],
    {
      env: { ...process.env, BENCH_DIR: join(benchDir, "wrk"), BENCH_RUN: `${run}-background`, ...route.env },
      stdio: "ignore"
    }
  )
  return () => flood.kill()
}

export const pathOf = (url) => new URL(url).pathname

/** The four routes of the contract on a server answering under `base`, for a signed-in user. */
export const contractRoutes = async (target, base) => {
  const email = `bench-${run}-${target.replace(/[^a-z0-9]/g, "-")}@bench.example`
  // wrk drops the connections of its warm-up mid-request, and a sign-in cut short still counts as
  // an attempt (lockout counts before it checks): the warm-up signs in to an account of its own.
  const warmEmail = `warm-${email}`
  // /me and refresh are each loaded as an account of their own: the sign-in loads' thousands of
  // sessions, or the refresh loads' 64 sign-ins each, would make MAX_SESSIONS_PER_USER end the
  // session of /me's token.
  const readerEmail = `reader-${email}`
  const refresherEmail = `refresher-${email}`
  for (const address of [email, warmEmail, readerEmail, refresherEmail]) {
    await post(`${base}/register`, { email: address, password })
  }
  const signIn = async () => {
    const login = await post(`${base}/login`, { email: readerEmail, password })
    if (login.status !== 200) throw new Error(`${target}: login answered ${login.status}`)
    return login.body
  }
  // A token taken at the start expires (15 minutes by default) before the run's last loads of
  // /me, which then measured 401s: each load is given one at most five minutes old.
  let token = (await signIn()).access_token
  let tokenTakenAt = Date.now()
  const accessToken = async () => {
    if (Date.now() - tokenTakenAt > 5 * 60_000) {
      token = (await signIn()).access_token
      tokenTakenAt = Date.now()
    }
    return token
  }
  const post_ = (route) => ({ BENCH_METHOD: "POST", BENCH_PATH: pathOf(`${base}/${route}`) })
  return {
    register: { url: `${base}/register`, script: "register.lua", connections: 8, env: post_("register") },
    login: {
      url: `${base}/login`,
      script: "fixed.lua",
      connections: 8,
      env: { ...post_("login"), BENCH_BODY: JSON.stringify({ email, password }) },
      warmupEnv: { BENCH_BODY: JSON.stringify({ email: warmEmail, password }) }
    },
    me: {
      url: `${base}/me`,
      script: "fixed.lua",
      connections: 50,
      env: { BENCH_PATH: pathOf(`${base}/me`) },
      prepare: async () => ({ BENCH_HEADERS: `Authorization: Bearer ${await accessToken()}` })
    },
    refresh: {
      url: `${base}/refresh`,
      script: "refresh.lua",
      connections: 50,
      env: post_("refresh"),
      prepare: async () => ({
        BENCH_TOKENS: await mintRefreshTokens(`${base}/login`, { email: refresherEmail, password }, 64)
      })
    }
  }
}

/** `portcullis serve` of the build in `dist` started with `env` (and `nodeArgs`), and its contract routes. */
export const openPortcullis = async (target, env, dist = join(root, "dist/"), nodeArgs = []) => {
  const port = freePort()
  const server = await startServer(
    target,
    [...nodeArgs, join(dist, "main/cli.js"), "serve"],
    {
      SERVICE_PORT: String(port),
      SERVICE_SECRET_KEY: secret,
      SERVICE_AUTH_RATE_LIMIT_ENABLED: "false",
      // Eight connections sign in to one account at once, and each attempt counts until it succeeds:
      // with the default of 5, the sixth sign-in in flight would find the account locked.
      SERVICE_MAX_LOGIN_ATTEMPTS: "100",
      ...env
    },
    `http://127.0.0.1:${port}/healthz`
  )
  const routes = await describing(server, () => contractRoutes(target, `http://127.0.0.1:${port}/api/v1/auth`))
  return { target, server, routes }
}

/**
 * One round of GET /me while sixteen connections sign in beside it, its p99 set against the idle
 * /me's taken just before on the same server; and the requests both loads served.
 */
export const meUnderLogins = async (server, routes) => {
  const idle = await measure(server, routes.me)
  const stop = background(routes.login, 16, warmup + seconds + 2)
  await sleep(500)
  try {
    const loaded = await measure(server, routes.me)
    return {
      pair: {
        ...loaded,
        idle_p99_ms: idle.p99_ms,
        p99_ratio: loaded.p99_ms / idle.p99_ms,
        ...(idle.failed || loaded.failed ? { failed: true } : {})
      },
      requests: idle.requests + loaded.requests
    }
  } finally {
    stop()
    // The sign-ins still queued when wrk stopped are hashed before the next load.
    await sleep(1_000)
  }
}
