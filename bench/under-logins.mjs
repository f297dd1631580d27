// `node bench/under-logins.mjs`: GET /me's p99 while sign-ins keep every core hashing, set
// against the idle /me's p99 taken just before on the same server, for one build or several
// side by side (BENCH_DIST: comma-separated dist/ folders; this checkout's by default). The
// builds' rounds alternate (BENCH_ROUNDS, 3) and each build's median round is printed. It is
// `npm run bench`'s "me under logins" over several builds: `node bench/ab.mjs <variant> --
// under-logins` runs it for an optimisation whose purpose is latency under load, not CPU a request.
import { join } from "node:path"
import {
  background,
  contractRoutes,
  describing,
  freePort,
  log,
  measure,
  middleBy,
  root,
  rounds,
  seconds,
  secret,
  sleep,
  startServer,
  warmup
} from "./harness.mjs"

const dists = (process.env.BENCH_DIST ?? join(root, "dist/")).split(",")

const open = async (dist) => {
  const port = freePort()
  const server = await startServer(
    dist,
    [join(dist, "main/cli.js"), "serve"],
    {
      SERVICE_PORT: String(port),
      SERVICE_SECRET_KEY: secret,
      SERVICE_AUTH_RATE_LIMIT_ENABLED: "false",
      SERVICE_MAX_LOGIN_ATTEMPTS: "100"
    },
    `http://127.0.0.1:${port}/healthz`
  )
  const routes = await describing(server, () => contractRoutes("under-logins", `http://127.0.0.1:${port}/api/v1/auth`))
  return { dist, server, routes, pairs: [] }
}

const builds = []
try {
  for (const dist of dists) builds.push(await open(dist))
  for (let round = 0; round < rounds; round++) {
    // Alternate which build goes first, so that neither always follows the other's sign-ins.
    const order = round % 2 === 0 ? builds : [...builds].reverse()
    for (const build of order) {
      const idle = await measure(build.server, build.routes.me)
      const stop = background(build.routes.login, 16, warmup + seconds + 2)
      await sleep(500)
      try {
        const loaded = await measure(build.server, build.routes.me)
        build.pairs.push({ idle_p99_ms: idle.p99_ms, p99_ms: loaded.p99_ms, ratio: loaded.p99_ms / idle.p99_ms })
      } finally {
        stop()
      }
      // The sign-ins still queued when wrk stopped are hashed before the next load.
      await sleep(1_000)
    }
  }
  for (const build of builds) {
    const middle = middleBy(build.pairs, "ratio")
    log(
      `${build.dist}: me p99 under logins ${middle.p99_ms.toFixed(2)} ms against ${middle.idle_p99_ms.toFixed(2)} ms idle, ratio ${middle.ratio.toFixed(2)} (rounds ${build.pairs.map((pair) => pair.ratio.toFixed(2)).join(", ")})`
    )
  }
} finally {
  for (const build of builds) await build.server.stop()
}
