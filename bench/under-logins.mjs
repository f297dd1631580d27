// `node bench/under-logins.mjs`: GET /me's p99 while sign-ins keep every core hashing, set
// against the idle /me's p99 taken just before on the same server, for one build or several
// side by side (BENCH_DIST: comma-separated dist/ folders; this checkout's by default). The
// builds' rounds alternate (BENCH_ROUNDS, 3) and each build's median round is printed. It is
// `npm run bench`'s "me under logins" over several builds: `node bench/ab.mjs <variant> --
// under-logins` runs it for an optimisation whose purpose is latency under load, not CPU a request.
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { log, meUnderLogins, middleBy, openPortcullis, root, rounds } from "./harness.mjs"

const dists = (process.env.BENCH_DIST ?? join(root, "dist/")).split(",")
const dataDir = mkdtempSync(join(tmpdir(), "portcullis-under-logins-"))

const builds = []
try {
  for (const [index, dist] of dists.entries()) {
    const database = `sqlite:${join(dataDir, `portcullis-${index}.db`)}`
    builds.push({ ...(await openPortcullis(dist, { SERVICE_DATABASE_URL: database }, dist)), dist, pairs: [] })
  }
  for (let round = 0; round < rounds; round++) {
    // Alternate which build goes first, so that neither always follows the other's sign-ins.
    for (const build of round % 2 === 0 ? builds : [...builds].reverse()) {
      build.pairs.push((await meUnderLogins(build.server, build.routes)).pair)
    }
  }
  for (const build of builds) {
    const middle = middleBy(build.pairs, "p99_ratio")
    log(
      `${build.dist}: me p99 under logins ${middle.p99_ms.toFixed(2)} ms against ${middle.idle_p99_ms.toFixed(2)} ms idle, ratio ${middle.p99_ratio.toFixed(2)} (rounds ${build.pairs.map((pair) => pair.p99_ratio.toFixed(2)).join(", ")})`
    )
  }
} finally {
  for (const build of builds) await build.server.stop()
  rmSync(dataDir, { recursive: true, force: true })
}
