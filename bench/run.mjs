// `npm run bench`: one run, on one machine, of Portcullis beside the floor (bare node:http), the
// Effect references and better-auth, loaded one after another with wrk. Writes
// bench/results/<date>.json and .svg (bench/README.md explains every figure).
//
// BENCH_SECONDS (10) and BENCH_WARMUP (2) set each load's length; BENCH_ROUNDS (3) how many
// times each compared load is taken, in alternating order (each figure is its median round's);
// BENCH_ONLY=<target,…> runs some targets only (portcullis-sqlite, portcullis-pg, floor, effect,
// better-auth, argon2).
// PostgreSQL + Redis runs happen when TEST_DATABASE_URL and TEST_REDIS_URL are set.
import { execFileSync } from "node:child_process"
import { existsSync, mkdirSync, writeFileSync } from "node:fs"
import { cpus, tmpdir } from "node:os"
import { join } from "node:path"
import { chart } from "./chart.mjs"
import {
  benchDir,
  contractRoutes,
  describing,
  freePort,
  log,
  measure,
  medianRound,
  meUnderLogins,
  middleBy,
  openPortcullis,
  password,
  post,
  root,
  rounds,
  rssOf,
  run,
  seconds,
  secret,
  startServer,
  warmup
} from "./harness.mjs"

const only = process.env.BENCH_ONLY?.split(",")
const wants = (target) => only === undefined || only.includes(target)

const results = []
const record = (target, route, figures) => {
  results.push({ target, route, ...figures })
  log(
    `${target.padEnd(28)} ${route.padEnd(16)} ${String(figures.requests_per_second).padStart(7)} req/s  p50 ${figures.p50_ms.toFixed(2)} ms  p99 ${figures.p99_ms.toFixed(2)} ms  errors ${figures.errors}  cpu ${figures.cpu_us_per_request} µs/req (event loop ${figures.event_loop_cpu_us_per_request})`
  )
}

/** Every route of a server, one after another. */
const measureAll = async ({ target, server, routes }) => {
  for (const [name, route] of Object.entries(routes)) record(target, name, await measure(server, route))
}

/**
 * What Portcullis is held to beyond the four routes, on a server whose routes have all been
 * loaded: /me while logins saturate the hash threads, a flood of logins, and (`rssLoad`) RSS
 * after 200,000 more requests.
 */
const portcullisExtras = async ({ target, server, routes }, { rssLoad = false } = {}) => {
  // Warm: every route has been loaded, every allocator is in use. RSS is read right after a load
  // at both ends of the 200,000 requests: V8 fills its heap to a few times what is live before it
  // collects under load, and gives pages back only after a while idle, so a reading taken after
  // the server sat idle (through the other servers' loads) is not comparable with one taken
  // right after a load. Both readings are kept.
  const idleRss = rssOf(server.pid)
  const warmRss =
    results.findLast((result) => result.target === target && result.rss_after_load)?.rss_after_load ?? idleRss
  let served = 0
  // GET /me while logins keep every hash thread busy: cheap routes must not queue behind them.
  // Its p99 is set against the idle /me's taken just before on the same server, a pair a round
  // (BENCH_ROUNDS); the pair of median ratio is recorded, every round's ratio beside it. A p99
  // is one request in a hundred: taken once, and minutes away from the idle load it is divided
  // by, it moved between runs of one build by more than the target's own margin.
  const pairs = []
  for (let round = 0; round < rounds; round++) {
    const { pair, requests } = await meUnderLogins(server, routes)
    pairs.push(pair)
    served += requests
  }
  record(target, "me under logins", {
    ...middleBy(pairs, "p99_ratio"),
    ...(pairs.some((pair) => pair.failed) ? { failed: true } : {}),
    rounds_p99_ratio: pairs.map((pair) => Math.round(pair.p99_ratio * 100) / 100)
  })
  // A flood of sign-ins far past what the cores can hash, each with an address of its own
  // (flood.lua): the queue's bound answers the excess 503 at once, and memory does not follow.
  const beforeFlood = rssOf(server.pid)
  const flood = await measure(server, { ...routes.login, script: "flood.lua", connections: 256 })
  served += flood.requests
  record(target, "login flood", flood)
  log(`${" ".repeat(45)}statuses ${JSON.stringify(flood.statuses)}`)
  results.push({ target, route: "login flood rss", rss_before: beforeFlood, rss_after: rssOf(server.pid) })
  if (rssLoad) {
    // RSS after 200,000 more requests, /me and /refresh in turn, and at least once: read right
    // after the flood, whose 256 connections swell it, it would not compare with the warm reading.
    do {
      served += (await measure(server, routes.me)).requests
      served += (await measure(server, routes.refresh, Math.max(2, seconds / 2))).requests
    } while (served < 200_000)
  }
  results.push({
    target,
    route: "rss",
    rss_after_warmup: warmRss,
    rss_when_idle_after_warmup: idleRss,
    rss_at_end: rssOf(server.pid),
    requests: served
  })
}

/**
 * Each compared route loaded on every server `rounds` times, the order reversed every other round,
 * and each server given its median round: one load in a slow phase of the VM (a third of the
 * speed, seen) no longer decides a ratio, and drift over the rounds falls on all alike.
 */
const alternated = async (opened) => {
  for (const slot of comparedSlots) {
    const loads = opened.flatMap(({ target, server, routes }) =>
      Object.entries(routes)
        .filter(([name]) => slotOf(name) === slot)
        .map(([name, route]) => ({ target, server, name, route, taken: [] }))
    )
    for (let round = 0; round < rounds; round++) {
      for (const load of round % 2 === 0 ? loads : [...loads].reverse()) {
        const figures = await measure(load.server, load.route)
        log(`  round ${round + 1} of ${rounds}: ${load.target} ${load.name} ${figures.requests_per_second} req/s`)
        load.taken.push(figures)
      }
    }
    for (const { target, name, taken } of loads) record(target, name, medianRound(taken))
  }
}

/** The PostgreSQL + Redis floor (bench/targets/floor-pg.mjs) on a schema of its own, dropped when it stops. */
const openFloorPg = async (pg, redis) => {
  const schema = `floor_bench_${run}`
  execFileSync("psql", [pg, "-q", "-c", `CREATE SCHEMA ${schema}`])
  const url = new URL(pg)
  url.searchParams.set("options", `-c search_path=${schema}`)
  const port = freePort()
  const dropSchema = () =>
    execFileSync("psql", [pg, "-q", "-c", `SET client_min_messages = warning; DROP SCHEMA ${schema} CASCADE`])
  try {
    const server = await startServer(
      "floor pg+redis",
      [join(benchDir, "targets/floor-pg.mjs")],
      {
        PORT: String(port),
        SECRET: secret,
        FLOOR_PG_URL: url.toString(),
        FLOOR_REDIS_URL: redis,
        FLOOR_RUN: String(run)
      },
      `http://127.0.0.1:${port}/hello`
    )
    const routes = await describing(server, () => contractRoutes("floor pg+redis", `http://127.0.0.1:${port}`))
    const stop = async () => {
      await server.stop()
      dropSchema()
    }
    return { target: "floor pg+redis", server: { ...server, stop }, routes }
  } catch (error) {
    dropSchema()
    throw error
  }
}

const openFloor = async (dataDir) => {
  const port = freePort()
  const server = await startServer(
    "floor",
    [join(benchDir, "targets/floor.mjs")],
    { PORT: String(port), SECRET: secret, FLOOR_DB: join(dataDir, "floor.db") },
    `http://127.0.0.1:${port}/`
  )
  const routes = await describing(server, () => contractRoutes("floor", `http://127.0.0.1:${port}`))
  return { target: "floor", server, routes: { ...routes, static: staticRoute(port) } }
}

/** The one static route the floor and the Effect references both answer: a server's own cost of a request. */
const staticRoute = (port) => ({
  url: `http://127.0.0.1:${port}/hello`,
  script: "fixed.lua",
  connections: 50,
  env: { BENCH_PATH: "/hello" }
})

/** The Effect references, tracer on and off: a static route, the lean /me, login and register. */
const openEffectReferences = async (dataDir) => {
  const database = join(dataDir, "reference.db")
  const { default: Database } = await import("better-sqlite3")
  const { hash } = await import("@node-rs/argon2")
  const { argon, schema } = await import("./targets/floorContract.mjs")
  const hashed = await hash(password, argon)
  const db = new Database(database)
  db.pragma("journal_mode = WAL")
  db.exec(schema)
  db.prepare("INSERT OR REPLACE INTO users VALUES (?, ?, ?, 1, 0, 0, ?)").run(
    "user-1",
    "lean@bench.example",
    hashed,
    Date.now()
  )
  db.close()
  const { SignJWT } = await import("jose")
  const token = await new SignJWT({})
    .setProtectedHeader({ alg: "HS256" })
    .setSubject("user-1")
    .setExpirationTime("1h")
    .sign(new TextEncoder().encode(secret))
  const opened = []
  // The first server is stopped if the second cannot start.
  try {
    for (const tracer of ["on", "off"]) {
      const port = freePort()
      const target = `effect reference (tracer ${tracer})`
      const server = await startServer(
        target,
        [join(benchDir, "targets/effect-references.mjs")],
        { PORT: String(port), SECRET: secret, TRACER: tracer, REFERENCE_DB: database },
        `http://127.0.0.1:${port}/hello`
      )
      opened.push({
        target,
        server,
        routes: {
          static: staticRoute(port),
          "lean me": {
            url: `http://127.0.0.1:${port}/me`,
            script: "fixed.lua",
            connections: 50,
            env: { BENCH_PATH: "/me", BENCH_HEADERS: `Authorization: Bearer ${token}` }
          },
          "lean register": {
            url: `http://127.0.0.1:${port}/register`,
            script: "register.lua",
            connections: 8,
            env: { BENCH_METHOD: "POST", BENCH_PATH: "/register" }
          },
          "lean login": {
            url: `http://127.0.0.1:${port}/login`,
            script: "fixed.lua",
            connections: 8,
            env: {
              BENCH_METHOD: "POST",
              BENCH_PATH: "/login",
              BENCH_BODY: JSON.stringify({ email: "lean@bench.example", password })
            }
          }
        }
      })
    }
  } catch (error) {
    for (const { server } of opened) await server.stop()
    throw error
  }
  return opened
}

const openBetterAuth = async (dataDir) => {
  const folder = join(benchDir, "targets/better-auth")
  if (!existsSync(join(folder, "node_modules/better-auth"))) {
    log("installing better-auth for the run (bench/targets/better-auth)")
    execFileSync("npm", ["ci", "--no-audit", "--no-fund"], { cwd: folder, stdio: "inherit" })
  }
  const port = freePort()
  const base = `http://127.0.0.1:${port}/api/auth`
  const server = await startServer(
    "better-auth",
    [join(folder, "server.mjs")],
    { PORT: String(port), SECRET: secret, BETTER_AUTH_DB: join(dataDir, "better-auth.db") },
    `${base}/ok`
  )
  return describing(server, async () => {
    // better-auth refuses requests without an Origin (its CSRF check); a browser always sends one.
    const origin = `http://127.0.0.1:${port}`
    const email = `bench-${run}-better-auth@bench.example`
    await post(`${base}/sign-up/email`, { email, password, name: "Bench" }, { origin })
    const signIn = await post(`${base}/sign-in/email`, { email, password }, { origin })
    const cookie = (signIn.headers.get("set-cookie") ?? "").split(";")[0]
    if (signIn.status !== 200 || cookie === "") throw new Error(`better-auth: sign-in answered ${signIn.status}`)
    return {
      target: "better-auth",
      server,
      routes: {
        register: {
          url: `${base}/sign-up/email`,
          script: "register.lua",
          connections: 8,
          env: {
            BENCH_METHOD: "POST",
            BENCH_PATH: "/api/auth/sign-up/email",
            BENCH_EXTRA: ',"name":"Bench"',
            BENCH_HEADERS: `Origin: ${origin}`
          }
        },
        login: {
          url: `${base}/sign-in/email`,
          script: "fixed.lua",
          connections: 8,
          env: {
            BENCH_METHOD: "POST",
            BENCH_PATH: "/api/auth/sign-in/email",
            BENCH_BODY: JSON.stringify({ email, password }),
            BENCH_HEADERS: `Origin: ${origin}`
          }
        },
        me: {
          url: `${base}/get-session`,
          script: "fixed.lua",
          connections: 50,
          env: { BENCH_PATH: "/api/auth/get-session", BENCH_HEADERS: `Cookie: ${cookie}\nOrigin: ${origin}` }
        }
      }
    }
  })
}

const argon2 = () => {
  const output = execFileSync(process.execPath, [join(benchDir, "argon2.mjs")]).toString()
  const line = output.split("\n").find((text) => text.startsWith("BENCH_RESULT "))
  for (const figures of JSON.parse(line?.slice("BENCH_RESULT ".length) ?? "[]")) {
    results.push({ target: "argon2id", route: `concurrency ${figures.concurrency}`, ...figures })
    log(`argon2id concurrency ${figures.concurrency}: ${figures.hashes_per_second} hashes/s`)
  }
}

const find = (target, route) => results.find((result) => result.target === target && result.route === route)
const ratio = (a, b) =>
  a?.requests_per_second && b?.requests_per_second
    ? Math.round((a.requests_per_second / b.requests_per_second) * 100) / 100
    : null

/** The ratios of the performance issue, for the SQLite default. */
const ratios = () => {
  // A load whose answers failed (`measure`) gives no ratio.
  const sound = (target, route) => {
    const result = find(target, route)
    return result?.failed ? undefined : result
  }
  const us = "portcullis sqlite"
  const me = sound(us, "me")
  const underLogins = sound(us, "me under logins")
  const rss = sound(us, "rss")
  const quiet = sound("portcullis sqlite (LOG_LEVEL=warn)", "me")
  return {
    "login / floor login (≥ 0.95)": ratio(sound(us, "login"), sound("floor", "login")),
    "register / floor register (≥ 0.95)": ratio(sound(us, "register"), sound("floor", "register")),
    "login / lean Effect login, tracer on (the floor's login on Effect 3)": ratio(
      sound(us, "login"),
      sound("effect reference (tracer on)", "lean login")
    ),
    "register / lean Effect register, tracer on": ratio(
      sound(us, "register"),
      sound("effect reference (tracer on)", "lean register")
    ),
    "me / floor me (≥ 0.3)": ratio(me, sound("floor", "me")),
    "me / lean Effect me, tracer on (≥ 1)": ratio(me, sound("effect reference (tracer on)", "lean me")),
    "me / better-auth get-session (≥ 4)": ratio(me, sound("better-auth", "me")),
    "refresh / floor refresh (≥ 0.5)": ratio(sound(us, "refresh"), sound("floor", "refresh")),
    "pg+redis me / pg+redis floor me (≥ 0.5)": ratio(
      sound("portcullis pg+redis, 1 worker", "me"),
      sound("floor pg+redis", "me")
    ),
    "pg+redis refresh / pg+redis floor refresh (≥ 0.4)": ratio(
      sound("portcullis pg+redis, 1 worker", "refresh"),
      sound("floor pg+redis", "refresh")
    ),
    "me p99 under logins / idle p99 just before (≤ 3)": underLogins
      ? Math.round(underLogins.p99_ratio * 100) / 100
      : null,
    "RSS after 200k more requests / after warm-up (≤ 1.25)": rss
      ? Math.round((rss.rss_at_end / rss.rss_after_warmup) * 100) / 100
      : null,
    "login flood: share answered 503 at once": sound(us, "login flood")?.statuses
      ? Math.round(((sound(us, "login flood").statuses["503"] ?? 0) / sound(us, "login flood").requests) * 100) / 100
      : null,
    "request log cost on me (< 0.10)":
      me && quiet ? Math.round((1 - me.requests_per_second / quiet.requests_per_second) * 100) / 100 : null
  }
}

/**
 * How fast a /me can be on Effect 3, measured in the run rather than assumed: the HttpApi static
 * route's CPU a request (tracer off: what Effect's server, router and fiber cost with nothing in
 * them) plus the floor's own work on its /me (its /me less its static route, both bare
 * node:http). A /me of the whole contract on Effect 3 spends at least the first, and cannot do
 * its work for less than the floor's hand-written code does. Against better-auth's get-session,
 * it says whether the ×4 target is within reach on this machine at all, and how far Portcullis
 * is from that reach.
 */
const effectBound = () => {
  const effectStatic = find("effect reference (tracer off)", "static")?.cpu_us_per_request
  const floorMe = find("floor", "me")?.cpu_us_per_request
  const floorStatic = find("floor", "static")?.cpu_us_per_request
  const ours = find("portcullis sqlite", "me")?.cpu_us_per_request
  const theirs = find("better-auth", "me")?.cpu_us_per_request
  if ([effectStatic, floorMe, floorStatic, ours, theirs].some((value) => value == null)) return null
  const floorWork = Math.max(0, floorMe - floorStatic)
  const bound = effectStatic + floorWork
  const round = (value) => Math.round(value * 100) / 100
  return {
    effect_static_us: effectStatic,
    floor_me_work_us: floorWork,
    me_bound_us: bound,
    portcullis_me_us: ours,
    better_auth_me_us: theirs,
    "better-auth / bound (the best ratio Effect 3 allows here)": round(theirs / bound),
    "better-auth / portcullis (CPU a request)": round(theirs / ours),
    "portcullis / bound": round(ours / bound)
  }
}

/**
 * Where a sign-in's and a registration's CPU goes, for the floor, the lean Effect route (tracer
 * on) and Portcullis: µs a request on the event loop, and on the other threads (the hash). The
 * hash costs all three the same; what differs is the event loop's share, which shows how much of
 * Portcullis's gap to the floor is Effect 3's own and how much is the contract's work.
 */
const eventLoopShares = () =>
  Object.fromEntries(
    ["login", "register"].map((route) => [
      route,
      Object.fromEntries(
        [
          ["floor", find("floor", route)],
          ["lean Effect (tracer on)", find("effect reference (tracer on)", `lean ${route}`)],
          ["portcullis sqlite", find("portcullis sqlite", route)]
        ]
          .filter(([, figures]) => figures?.event_loop_cpu_us_per_request != null)
          .map(([name, figures]) => [
            name,
            {
              event_loop_us: figures.event_loop_cpu_us_per_request,
              other_threads_us: figures.cpu_us_per_request - figures.event_loop_cpu_us_per_request
            }
          ])
      )
    ])
  )

/** The routes compared across servers, in the order they are loaded; the Effect references' `lean` routes are the contract's. */
const comparedSlots = ["register", "login", "me", "refresh", "static"]
const slotOf = (name) => name.replace(/^lean /, "")

const main = async () => {
  log(
    `bench run ${run}: ${cpus().length} cores (${cpus()[0]?.model}), node ${process.version}, ${warmup}s + ${seconds}s per load`
  )
  execFileSync("npm", ["run", "build", "--silent"], { cwd: root, stdio: "inherit" })
  const dataDir = join(tmpdir(), `portcullis-bench-${run}`)
  mkdirSync(dataDir, { recursive: true })

  // The servers compared with each other are all started first and stay up, idle but for their
  // own loads, and each route is loaded on every one of them in turn: a shared VM's speed drifts
  // over a run, and loading one server after another would compare servers measured minutes apart.
  const opened = []
  try {
    if (wants("floor")) opened.push(await openFloor(dataDir))
    if (wants("effect")) opened.push(...(await openEffectReferences(dataDir)))
    if (wants("portcullis-sqlite")) {
      // The request log's cost is the difference between two servers that differ in their log
      // level alone, so both take every load, in the same rounds: a server that has served every
      // route has another history (a larger database, V8 code shaped by all of them) than one
      // loaded on GET /me alone, and that difference is not the log's.
      opened.push(
        await openPortcullis("portcullis sqlite", { SERVICE_DATABASE_URL: `sqlite:${join(dataDir, "portcullis.db")}` }),
        await openPortcullis("portcullis sqlite (LOG_LEVEL=warn)", {
          SERVICE_DATABASE_URL: `sqlite:${join(dataDir, "portcullis-quiet.db")}`,
          SERVICE_LOG_LEVEL: "warning"
        })
      )
    }
    if (wants("better-auth")) opened.push(await openBetterAuth(dataDir))
    await alternated(opened)
    const us = opened.find(({ target }) => target === "portcullis sqlite")
    if (us !== undefined) await portcullisExtras(us, { rssLoad: true })
  } finally {
    for (const { server } of opened) await server.stop()
  }
  if (wants("argon2")) argon2()
  const { TEST_DATABASE_URL: pg, TEST_REDIS_URL: redis } = process.env
  if (wants("portcullis-pg") && pg && redis) {
    for (const workers of [1, 2]) {
      const schema = `portcullis_bench_${run}_${workers}`
      execFileSync("psql", [pg, "-q", "-c", `CREATE SCHEMA ${schema}`])
      const url = new URL(pg)
      url.searchParams.set("options", `-c search_path=${schema}`)
      try {
        const pgTarget = await openPortcullis(`portcullis pg+redis, ${workers} worker${workers > 1 ? "s" : ""}`, {
          SERVICE_DATABASE_URL: url.toString(),
          SERVICE_REDIS_URL: redis,
          SERVICE_WORKERS: String(workers)
        })
        // One worker is set against the PostgreSQL + Redis floor, loaded in the same rounds.
        const floorPg =
          workers === 1 && wants("floor")
            ? await openFloorPg(pg, redis).catch(async (error) => {
                await pgTarget.server.stop()
                throw error
              })
            : undefined
        try {
          if (floorPg === undefined) await measureAll(pgTarget)
          else await alternated([floorPg, pgTarget])
          await portcullisExtras(pgTarget)
        } finally {
          await pgTarget.server.stop()
          await floorPg?.server.stop()
        }
      } finally {
        execFileSync("psql", [pg, "-q", "-c", `SET client_min_messages = warning; DROP SCHEMA ${schema} CASCADE`])
      }
    }
  }

  const report = {
    date: new Date().toISOString(),
    machine: { cores: cpus().length, cpu: cpus()[0]?.model, node: process.version },
    load: { warmup_seconds: warmup, seconds, rounds, tool: "wrk -t2" },
    results,
    ratios: ratios(),
    event_loop_shares: eventLoopShares(),
    me_on_effect3: effectBound()
  }
  const resultsDir = join(benchDir, "results")
  mkdirSync(resultsDir, { recursive: true })
  const stamp = report.date.slice(0, 10)
  // Arrays of numbers (each round's requests a second) on one line, as the linter formats them,
  // so that a results file can be committed as written; no JSON string holds a raw line break.
  const json = JSON.stringify(report, null, 2).replace(
    /\[\n\s+([\d.,\s-]+?)\n\s*\]/g,
    (_, items) => `[${items.split(/,\s*/).join(", ")}]`
  )
  writeFileSync(join(resultsDir, `${stamp}.json`), `${json}\n`)
  writeFileSync(join(resultsDir, `${stamp}.svg`), chart(report))
  log(
    `\nratios:\n${Object.entries(report.ratios)
      .map(([name, value]) => `  ${name}: ${value}`)
      .join("\n")}`
  )
  log(
    `\nCPU a request, event loop + other threads:\n${Object.entries(report.event_loop_shares)
      .flatMap(([route, servers]) =>
        Object.entries(servers).map(
          ([name, share]) =>
            `  ${route.padEnd(9)} ${name.padEnd(24)} ${String(share.event_loop_us).padStart(6)} µs + ${share.other_threads_us} µs`
        )
      )
      .join("\n")}`
  )
  if (report.me_on_effect3 !== null) {
    log(
      `\nGET /me on Effect 3, CPU a request:\n${Object.entries(report.me_on_effect3)
        .map(([name, value]) => `  ${name}: ${value}`)
        .join("\n")}`
    )
  }
  log(`written bench/results/${stamp}.json and .svg`)
}

main().catch((error) => {
  console.error(error)
  process.exit(1)
})
