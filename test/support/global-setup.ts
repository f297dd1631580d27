import { execFileSync } from "node:child_process"
import { fileURLToPath } from "node:url"

/**
 * The process tests run the compiled CLI, so dist/ is brought up to date once per run: compiled
 * when a source changed since the last build (scripts/build.mjs, which `npm start` uses too).
 */
export default function setup() {
  const root = fileURLToPath(new URL("../..", import.meta.url))
  execFileSync(process.execPath, ["scripts/build.mjs", "--if-stale"], { cwd: root, stdio: "inherit" })
}
