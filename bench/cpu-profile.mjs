// Preloaded by `npm run bench:provider` under BENCH_PROFILE (NODE_OPTIONS refuses --cpu-prof):
// SIGUSR2 starts the CPU profiler, the next SIGUSR2 stops it and writes
// <dir>/<pid>-<n>.cpuprofile, so that a profile holds the timed phase only.
import { mkdirSync, writeFileSync } from "node:fs"
import { Session } from "node:inspector"

const dir = process.env.BENCH_PROFILE_DIR
if (dir) {
  const session = new Session()
  session.connect()
  session.post("Profiler.enable")
  let running = false
  let written = 0
  process.on("SIGUSR2", () => {
    if (!running) {
      session.post("Profiler.start")
      running = true
      return
    }
    running = false
    session.post("Profiler.stop", (error, result) => {
      if (error) return
      mkdirSync(dir, { recursive: true })
      writeFileSync(`${dir}/${process.pid}-${++written}.cpuprofile`, JSON.stringify(result.profile))
    })
  })
}
