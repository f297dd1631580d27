import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { lines, runCliInProcess } from "../support/cliRun.js"

/**
 * create-superuser is where an address enters through the CLI: one that looks like another
 * (docs/behaviour.md, "Emails") is refused before anything is stored, naming the option and
 * the rule, never echoing the address.
 */

const strongPassword = "correct horse battery staple"
let scratch = ""

beforeAll(() => {
  scratch = mkdtempSync(join(tmpdir(), "portcullis-cli-look-alike-"))
})

afterAll(() => {
  if (scratch !== "") rmSync(scratch, { recursive: true, force: true })
})

const cli = (args: ReadonlyArray<string>, database: string) => runCliInProcess(args, { SERVICE_DATABASE_URL: database })

const lookAlikes: ReadonlyArray<readonly [string, string, RegExp]> = [
  ["a zero-width space", "root\u200Badmin@example.com", /^--email must not contain invisible characters/],
  ["a right-to-left override", "root\u202Eadmin@example.com", /^--email must not contain bidirectional controls/],
  ["a C1 control", "root\u0085admin@example.com", /^--email must not contain control characters/],
  [
    "a Cyrillic а among Latin letters",
    "root\u0430dmin@example.com",
    /^--email must not mix Latin letters with Cyrillic/
  ],
  ["an xn-- label decoding to mixed scripts", "root@xn--pypal-4ve.com", /^--email must not mix Latin letters/]
]

describe("portcullis create-superuser --email with an address that looks like another", () => {
  it("refuses each with exit 1 and one line naming --email and the rule; nobody is created", async () => {
    const database = `sqlite:${join(scratch, "look-alike", "portcullis.sqlite")}`
    for (const [label, address, rule] of lookAlikes) {
      const run = await cli(["create-superuser", "--email", address, "--password", strongPassword], database)
      expect(run.status, label).toBe(1)
      expect(lines(run.stderr), label).toEqual([expect.stringMatching(rule)])
      expect(run.stderr, label).not.toContain(address)
      expect(run.stdout, label).toBe("")
    }
    const created = await cli(
      ["create-superuser", "--email", "root@example.com", "--password", strongPassword],
      database
    )
    expect(created.status).toBe(0)
    const listed = JSON.parse((await cli(["user", "list", "--json"], database)).stdout) as {
      users: ReadonlyArray<{ email: string }>
    }
    expect(listed.users.map((user) => user.email)).toEqual(["root@example.com"])
  }, 120_000)
})
