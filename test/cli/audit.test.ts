import { describe, expect, it } from "@effect/vitest"
import { AuditEventType } from "../../domain/Audit.js"
import { lines, runCliInProcess } from "../support/cliRun.js"
import { temporaryDatabase } from "../support/processes.js"

const strongPassword = "correct horse battery staple"
const secretKey = "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKL"

interface Page {
  readonly events: ReadonlyArray<{
    readonly id: number
    readonly type: string
    readonly user_id: string | null
    readonly actor: { readonly kind: string; readonly id: string | null }
    readonly details: Record<string, unknown>
  }>
  readonly next_cursor: string | null
}

describe("portcullis audit", () => {
  const vars = { SERVICE_DATABASE_URL: temporaryDatabase(), SERVICE_SECRET_KEY: secretKey }
  const cli = (args: ReadonlyArray<string>, input?: string, on: Readonly<Record<string, string>> = vars) =>
    runCliInProcess(args, on, { timeout: 30_000, ...(input === undefined ? {} : { input }) })
  const page = async (args: ReadonlyArray<string>, on: Readonly<Record<string, string>> = vars) => {
    const run = await cli(["audit", ...args], undefined, on)
    expect(run.stderr).toBe("")
    expect(run.status).toBe(0)
    return JSON.parse(run.stdout) as Page
  }

  it("prints the operator's changes, made with the CLI as their actor, with the API's filters and pages", async () => {
    const superuser = ["create-superuser", "--email", "root@example.com", "--password", strongPassword]
    expect((await cli(superuser)).status).toBe(0)
    expect((await cli(["user", "update", "--email", "root@example.com", "--verified", "false"])).status).toBe(0)
    expect((await cli(["user", "update", "--email", "root@example.com", "--active", "false"])).status).toBe(0)

    const all = await page([])
    expect(all.next_cursor).toBeNull()
    expect(all.events.map((event) => event.type)).toEqual([
      "sessions.revoked_all",
      "user.updated",
      "user.updated",
      "user.created"
    ])
    const userId = all.events[3]?.user_id ?? ""
    for (const event of all.events) {
      expect(event.actor).toEqual({ kind: "cli", id: null })
      expect(event.user_id).toBe(userId)
    }
    expect(all.events[1]?.details).toEqual({ is_active: false })
    expect(all.events[3]?.details).toEqual({ is_superuser: true })

    const updates = await page(["--type", "user.updated", "--user", userId, "--limit", "1"])
    expect(updates.events.map((event) => event.details)).toEqual([{ is_active: false }])
    const rest = await page([
      "--type",
      "user.updated",
      "--user",
      userId,
      "--limit",
      "1",
      "--cursor",
      updates.next_cursor ?? ""
    ])
    expect(rest.events.map((event) => event.details)).toEqual([{ is_verified: false }])
    expect(rest.next_cursor).toBeNull()
    expect((await page(["--user", "someone-else"])).events).toEqual([])
  }, 180_000)

  it("prints user set-password as a password reset and user roles add|remove, made with the CLI as their actor", async () => {
    const own = { ...vars, SERVICE_DATABASE_URL: temporaryDatabase() }
    const ops = ["--email", "ops@example.com"]
    expect((await cli(["create-superuser", ...ops, "--password", strongPassword], undefined, own)).status).toBe(0)
    const added = await cli(["user", "roles", "add", ...ops, "auditor"], undefined, own)
    expect(added.status, added.stderr).toBe(0)
    const userId = (JSON.parse(added.stdout) as { id: string }).id
    expect((await cli(["user", "roles", "remove", ...ops, "auditor"], undefined, own)).status).toBe(0)
    const set = await cli(["user", "set-password", ...ops, "--password-stdin"], "a brand new passphrase\n", own)
    expect(set.status, set.stderr).toBe(0)

    const events = (await page(["--user", userId], own)).events
    expect(events.map((event) => [event.type, event.details])).toEqual([
      ["password.reset", { sessions_ended: 0 }],
      ["role.removed", { role: "auditor" }],
      ["role.assigned", { role: "auditor" }],
      ["user.created", { is_superuser: true }]
    ])
    for (const event of events) expect(event.actor).toEqual({ kind: "cli", id: null })
  }, 180_000)

  it("refuses an unknown type, a bad limit, cursor or user id with exit code 1, in one line naming the option", async () => {
    for (const [args, refusal] of [
      // The refusal lists the valid types, so that a typo can be put right without the help.
      [["--type", "no.such.type"], `--type must be one of ${AuditEventType.literals.join(", ")}`],
      [["--limit", "0"], "--limit must be a whole number from 1 to 500"],
      [["--limit", "ten"], "'ten' is not a integer"],
      [["--cursor", "abc"], "--cursor must be a cursor from next_cursor"],
      [["--user", ""], "--user must be a user id"]
    ] as const) {
      const run = await cli(["audit", ...args])
      expect(run.status).toBe(1)
      expect(lines(run.stderr), args.join(" ")).toEqual([refusal])
      expect(run.stdout).not.toContain("events")
    }
  }, 180_000)
})
