import { request } from "node:http"
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { lines, runCliInProcess } from "../support/cliRun.js"
import { killAll, startServer, temporaryDatabase } from "../support/processes.js"

const strongPassword = "correct horse battery staple"
const secretKey = "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKL"

afterAll(killAll)

interface ListedUser {
  readonly id: string
  readonly email: string
  readonly is_active: boolean
  readonly is_superuser: boolean
  readonly roles: ReadonlyArray<string>
  readonly created_at: string
}

/** A database with the given superusers, created oldest first. */
const withUsers = async (emails: ReadonlyArray<string>) => {
  const vars = { SERVICE_DATABASE_URL: temporaryDatabase(), SERVICE_SECRET_KEY: secretKey }
  for (const email of emails) {
    const created = await runCliInProcess(["create-superuser", "--email", email, "--password-stdin"], vars, {
      input: `${strongPassword}\n`
    })
    if (created.status !== 0) throw new Error(created.stderr)
  }
  return vars
}

const listJson = async (vars: Readonly<Record<string, string>>, args: ReadonlyArray<string> = []) => {
  const run = await runCliInProcess(["user", "list", "--json", ...args], vars)
  expect(run.status, run.stderr).toBe(0)
  return JSON.parse(run.stdout) as { users: ReadonlyArray<ListedUser>; next_after: string | null }
}

describe("portcullis user list", () => {
  let vars: Readonly<Record<string, string>> = {}
  beforeAll(async () => {
    vars = await withUsers(["ada@example.com", "bob@example.org", "carol@example.com"])
  }, 90_000)

  it("prints a table of id, email, flags, roles and created_at, and the user the next page starts after", async () => {
    const run = await runCliInProcess(["user", "list", "--limit", "2"], vars)
    expect(run.status).toBe(0)
    const [header, first, second, more, ...rest] = lines(run.stdout)
    expect(header?.split(/\s+/)).toEqual(["ID", "EMAIL", "FLAGS", "ROLES", "CREATED_AT"])
    expect(first).toMatch(/^\S+\s+ada@example\.com\s+active,verified,superuser\s+-\s+\d{4}-\d\d-\d\dT[\d:.]+Z$/)
    expect(second).toContain("bob@example.org")
    const bobId = second?.split(/\s+/)[0]
    expect(more).toBe(`More users: --after ${bobId}`)
    expect(rest).toEqual([])

    const last = await runCliInProcess(["user", "list", "--limit", "2", "--after", String(bobId)], vars)
    expect(lines(last.stdout)).toHaveLength(2)
    expect(last.stdout).toContain("carol@example.com")
    expect(last.stdout).not.toContain("More users")
  }, 60_000)

  it("--json pages by keyset, --email by the start of the address and --email-contains by a part, in any letter case", async () => {
    const all = await listJson(vars)
    expect(all.users.map((user) => user.email)).toEqual(["ada@example.com", "bob@example.org", "carol@example.com"])
    expect(all.next_after).toBeNull()
    expect(all.users[0]).toMatchObject({ is_active: true, is_superuser: true, roles: [] })
    expect(all.users[0]).not.toHaveProperty("hashed_password")

    const filtered = await listJson(vars, ["--email-contains", "EXAMPLE.COM", "--limit", "1"])
    expect(filtered.users.map((user) => user.email)).toEqual(["ada@example.com"])
    expect(filtered.next_after).toBe(all.users[0]?.id)
    const next = await listJson(vars, ["--email-contains", "example.com", "--after", String(filtered.next_after)])
    expect(next.users.map((user) => user.email)).toEqual(["carol@example.com"])
    expect((await listJson(vars, ["--email-contains", "nobody"])).users).toEqual([])

    expect((await listJson(vars, ["--email", "BO"])).users.map((user) => user.email)).toEqual(["bob@example.org"])
    expect((await listJson(vars, ["--email", "example.com"])).users).toEqual([])
  }, 120_000)

  it("refuses a limit out of range and an --after that names no user, in one line", async () => {
    for (const [args, message] of [
      [["--limit", "0"], /^--limit must be/],
      [["--limit", "1001"], /^--limit must be/],
      [["--after", " "], /^--after is empty/],
      [["--after", "no-such-user"], /user/i]
    ] as const) {
      const run = await runCliInProcess(["user", "list", ...args], vars)
      expect(run.status).toBe(1)
      expect(lines(run.stderr)).toEqual([expect.stringMatching(message)])
    }
  }, 120_000)
})

describe("portcullis user roles and user update by id", () => {
  it("adds and removes roles by email or id, printing the user; unknown users and bad names are refused", {
    timeout: 270_000
  }, async () => {
    const vars = await withUsers(["ops@example.com"])
    const [user] = (await listJson(vars)).users
    if (user === undefined) throw new Error("no user")

    const added = await runCliInProcess(["user", "roles", "add", "--email", "ops@example.com", "auditor"], vars)
    expect(added.status, added.stderr).toBe(0)
    expect(JSON.parse(added.stdout)).toMatchObject({ id: user.id, roles: ["auditor"] })
    const byId = await runCliInProcess(["user", "roles", "add", "--id", user.id, "editor"], vars)
    expect([...(JSON.parse(byId.stdout) as ListedUser).roles].sort()).toEqual(["auditor", "editor"])

    const removed = await runCliInProcess(["user", "roles", "remove", "--id", user.id, "auditor"], vars)
    expect((JSON.parse(removed.stdout) as ListedUser).roles).toEqual(["editor"])
    expect((await listJson(vars)).users[0]?.roles).toEqual(["editor"])

    const unknown = await runCliInProcess(["user", "roles", "add", "--email", "nobody@example.com", "editor"], vars)
    expect(unknown.status).toBe(1)
    expect(lines(unknown.stderr)).toHaveLength(1)
    const badName = await runCliInProcess(["user", "roles", "add", "--id", user.id, "no spaces"], vars)
    expect(badName.status).toBe(1)
    expect(lines(badName.stderr)).toEqual([expect.stringMatching(/is not a role name/)])
    const both = await runCliInProcess(
      ["user", "roles", "add", "--id", user.id, "--email", "ops@example.com", "x"],
      vars
    )
    expect(both.status).toBe(1)
  })

  it("user update takes --id as well as --email", async () => {
    const vars = await withUsers(["flags@example.com"])
    const [user] = (await listJson(vars)).users
    if (user === undefined) throw new Error("no user")
    const run = await runCliInProcess(["user", "update", "--id", user.id, "--superuser", "false"], vars)
    expect(run.status, run.stderr).toBe(0)
    expect(JSON.parse(run.stdout)).toMatchObject({ id: user.id, is_superuser: false })
  }, 90_000)
})

/**
 * One request on a connection of its own. fetch would reuse a pooled connection that the server
 * may close (keep-alive timeout) while a slow CLI run goes on, and fail with "other side closed".
 */
const send = (url: string, options: { readonly token?: string; readonly json?: unknown } = {}) =>
  new Promise<{ readonly status: number; readonly body: string }>((resolve, reject) => {
    const headers: Record<string, string> =
      options.token === undefined ? {} : { authorization: `Bearer ${options.token}` }
    if (options.json !== undefined) headers["content-type"] = "application/json"
    const req = request(
      url,
      { method: options.json === undefined ? "GET" : "POST", headers, agent: false, timeout: 10_000 },
      (res) => {
        let body = ""
        res.setEncoding("utf8")
        res.on("data", (chunk: string) => {
          body += chunk
        })
        res.on("end", () => resolve({ status: res.statusCode ?? 0, body }))
      }
    )
    req.on("error", reject)
    req.end(options.json === undefined ? undefined : JSON.stringify(options.json))
  })

describe("portcullis user set-password", () => {
  const signIn = (base: string, password: string) =>
    send(`${base}/api/v1/auth/login`, { json: { email: "reset@example.com", password } })

  it("sets the password under the policy and ends every session, as a reset does", async () => {
    const vars = await withUsers(["reset@example.com"])
    const server = await startServer(vars)
    const signedIn = await signIn(server.url, strongPassword)
    expect(signedIn.status).toBe(200)
    const { access_token, refresh_token } = JSON.parse(signedIn.body) as { access_token: string; refresh_token: string }

    const weak = await runCliInProcess(
      ["user", "set-password", "--email", "reset@example.com", "--password-stdin"],
      vars,
      {
        input: "short\n"
      }
    )
    expect(weak.status).toBe(1)
    expect(lines(weak.stderr)).toEqual([expect.stringMatching(/at least 8 characters/)])
    const unprompted = await runCliInProcess(["user", "set-password", "--email", "reset@example.com"], vars)
    expect(unprompted.status).toBe(1)
    expect(unprompted.stderr).toMatch(/^No terminal to ask for the password on/)

    const newPassword = "an entirely new passphrase"
    const set = await runCliInProcess(
      ["user", "set-password", "--email", "reset@example.com", "--password-stdin"],
      vars,
      {
        input: `${newPassword}\n`
      }
    )
    expect(set.status, set.stderr).toBe(0)
    expect(set.stdout).toMatch(/^Set the password of reset@example\.com; all of their sessions have ended\./)
    expect(`${set.stdout}${set.stderr}`).not.toContain(newPassword)

    const me = await send(`${server.url}/api/v1/auth/me`, { token: access_token })
    expect(me.status, "the old session's access token").toBe(401)
    const refreshed = await send(`${server.url}/api/v1/auth/refresh`, { json: { refresh_token } })
    expect(refreshed.status, "the old session's refresh token").toBe(401)
    expect((await signIn(server.url, strongPassword)).status).toBe(401)
    expect((await signIn(server.url, newPassword)).status).toBe(200)
    await server.stop()
  }, 150_000)
})

describe("portcullis user update --new-email", () => {
  it("moves the account at once, verified, ends every session and audits it; refuses a taken or look-alike address", async () => {
    const vars = await withUsers(["lost@example.com", "taken@example.com"])
    const server = await startServer(vars)
    const signedIn = await send(`${server.url}/api/v1/auth/login`, {
      json: { email: "lost@example.com", password: strongPassword }
    })
    expect(signedIn.status).toBe(200)
    const { access_token } = JSON.parse(signedIn.body) as { access_token: string }

    const taken = await runCliInProcess(
      ["user", "update", "--email", "lost@example.com", "--new-email", "taken@example.com"],
      vars
    )
    expect(taken.status).toBe(1)
    const lookAlike = await runCliInProcess(
      ["user", "update", "--email", "lost@example.com", "--new-email", "f\u200Bound@example.com"],
      vars
    )
    expect(lookAlike.status).toBe(1)
    expect(lines(lookAlike.stderr)).toEqual([
      expect.stringMatching(/^--new-email must not contain invisible characters/)
    ])
    expect((await send(`${server.url}/api/v1/auth/me`, { token: access_token })).status).toBe(200)

    const moved = await runCliInProcess(
      ["user", "update", "--email", "lost@example.com", "--new-email", "Found@Example.com"],
      vars
    )
    expect(moved.status, moved.stderr).toBe(0)
    expect(JSON.parse(moved.stdout)).toMatchObject({ email: "found@example.com", is_verified: true })
    expect((await send(`${server.url}/api/v1/auth/me`, { token: access_token })).status).toBe(401)
    const signIn = (email: string) =>
      send(`${server.url}/api/v1/auth/login`, { json: { email, password: strongPassword } })
    expect((await signIn("lost@example.com")).status).toBe(401)
    expect((await signIn("found@example.com")).status).toBe(200)
    const audit = await runCliInProcess(["audit", "--type", "email.change_confirmed"], vars)
    expect(JSON.parse(audit.stdout).events).toEqual([
      expect.objectContaining({
        type: "email.change_confirmed",
        actor: expect.objectContaining({ kind: "cli" }),
        details: expect.objectContaining({ from: "lost@example.com", to: "found@example.com", by: "operator" })
      })
    ])
    await server.stop()
  }, 150_000)
})
