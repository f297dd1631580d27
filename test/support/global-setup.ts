import { execFileSync } from "node:child_process"
import { fileURLToPath } from "node:url"

/** The process tests run the compiled CLI, so dist/ is brought up to date once per run. */
export default function setup() {
  const root = fileURLToPath(new URL("../..", import.meta.url))
  execFileSync(process.execPath, ["node_modules/typescript/bin/tsc", "-p", "tsconfig.build.json"], {
    cwd: root,
    stdio: "inherit"
  })
}
