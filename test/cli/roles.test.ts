import { beforeAll, describe, expect, it } from "@effect/vitest"
import { lines, runCliInProcess } from "../support/cliRun.js"
import { temporaryDatabase } from "../support/processes.js"

/** `portcullis role`: a role's permissions set up without the admin API (a superuser's token and curl). */

const vars = {
  SERVICE_DATABASE_URL: temporaryDatabase(),
  SERVICE_SECRET_KEY: "roles-cli-secret-key-of-32-bytes-or-more!"
}
const cli = (...args: ReadonlyArray<string>) => runCliInProcess(args, vars)

describe("portcullis role grant | revoke | list", () => {
  beforeAll(async () => {
    const created = await runCliInProcess(
      ["create-superuser", "--email", "ada@example.com", "--password-stdin"],
      vars,
      { input: "correct horse battery staple\n" }
    )
    expect(created.status, created.stderr).toBe(0)
  }, 60_000)

  it("grants and revokes a role's permissions, lists every role in use with them, and audits each change", async () => {
    expect((await cli("role", "list")).stdout.trim()).toBe("No roles.")

    const granted = await cli("role", "grant", "editor", "posts:write")
    expect(granted.status, granted.stderr).toBe(0)
    expect(JSON.parse(granted.stdout)).toEqual({ role: "editor", permissions: ["posts:write"] })
    expect((await cli("role", "grant", "editor", "posts:delete")).status).toBe(0)
    expect((await cli("user", "roles", "add", "--email", "ada@example.com", "support")).status).toBe(0)

    expect(lines((await cli("role", "list")).stdout)).toEqual(["editor\tposts:delete,posts:write", "support\t-"])

    const revoked = await cli("role", "revoke", "editor", "posts:write")
    expect(JSON.parse(revoked.stdout)).toEqual({ role: "editor", permissions: ["posts:delete"] })
    expect(JSON.parse((await cli("role", "list", "--json")).stdout)).toEqual([
      { role: "editor", permissions: ["posts:delete"] },
      { role: "support", permissions: [] }
    ])

    const audit = JSON.parse((await cli("audit", "--limit", "50")).stdout) as {
      events: ReadonlyArray<{ type: string; details: unknown }>
    }
    const changes = audit.events.filter((event) => event.type.startsWith("permission."))
    expect(changes.map((event) => [event.type, event.details])).toEqual([
      ["permission.removed", { role: "editor", permission: "posts:write" }],
      ["permission.assigned", { role: "editor", permission: "posts:delete" }],
      ["permission.assigned", { role: "editor", permission: "posts:write" }]
    ])
  }, 60_000)

  it("refuses a name that is not one, changing nothing", async () => {
    const refused = await cli("role", "grant", "editor", "posts write")
    expect(refused.status).toBe(1)
    expect(refused.stderr).toContain('PERMISSION "posts write" is not a permission name')
    const badRole = await cli("role", "revoke", "edi tor", "posts:read")
    expect(badRole.status).toBe(1)
    expect(badRole.stderr).toContain('ROLE "edi tor" is not a role name')
    expect(JSON.parse((await cli("role", "list", "--json")).stdout)).not.toContainEqual(
      expect.objectContaining({ permissions: expect.arrayContaining(["posts write"]) })
    )
  }, 60_000)
})
