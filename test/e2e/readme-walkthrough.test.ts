import { readFileSync } from "node:fs"
import { join } from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { runProcess } from "../support/cliRun.js"
import { type RunningServer, root, startServer, temporaryDatabase } from "../support/processes.js"

/** The shell block between the walk-through markers of the README, exactly as a reader sees it. */
const walkthrough = () => {
  const readme = readFileSync(join(root, "README.md"), "utf8")
  const section = /<!-- walkthrough:start -->\s*```sh\n([\s\S]*?)```\s*<!-- walkthrough:end -->/.exec(readme)
  if (section?.[1] === undefined) throw new Error("README has no walk-through block")
  return section[1]
}

/** The login answer the README shows, after "The login answer looks like this". */
const shownLoginAnswer = () => {
  const readme = readFileSync(join(root, "README.md"), "utf8")
  const block = /The login answer looks like this[^\n]*\n\s*```json\n([\s\S]*?)```/.exec(readme)?.[1]
  if (block === undefined) throw new Error("README shows no login answer")
  return JSON.parse(block.replaceAll("…", "")) as { readonly user: Record<string, unknown> }
}

describe("the README's curl walk-through", () => {
  let server: RunningServer

  beforeAll(async () => {
    server = await startServer({
      SERVICE_DATABASE_URL: temporaryDatabase(),
      SERVICE_SECRET_KEY: "walkthrough-secret-key-of-at-least-32-bytes",
      SERVICE_LOG_LEVEL: "warning"
    })
  })
  afterAll(() => server.stop())

  it("works verbatim against a real server, and again on a second run", async () => {
    // The only change: the port of this test's server for the README's 8000.
    const script = walkthrough().replaceAll("127.0.0.1:8000", server.url.replace("http://", ""))
    for (let run = 0; run < 2; run++) {
      const run = await runProcess("bash", ["-euo", "pipefail", "-c", script], { timeout: 30_000 })
      expect(run.status, run.stderr).toBe(0)
      const output = run.stdout
      expect(output).toMatch(/^HTTP\/1\.1 202 Accepted/m)
      expect(output).toContain('"token_type":"bearer"')
      expect(output).toContain('"email":"alice@example.com"')
      expect(output.match(/"access_token"/g)).toHaveLength(2)
      // The answer the README shows has the fields the service answers, the user's included.
      const answered = JSON.parse(output.split("\n").find((line) => line.includes('"token_type"')) ?? "{}")
      const shown = shownLoginAnswer()
      expect(Object.keys(shown).sort()).toEqual(Object.keys(answered).sort())
      expect(Object.keys(shown.user).sort()).toEqual(Object.keys(answered.user).sort())
      expect(output).toMatch(/^HTTP\/1\.1 204 No Content/m)
      expect(output.trim().split("\n").at(-1)).toBe(
        '{"type":"urn:portcullis:problem:TokenBlacklistedError","title":"Token revoked","status":401,"detail":"The token has been revoked.","code":"TokenBlacklistedError"}'
      )
    }
  }, 90_000)
})
