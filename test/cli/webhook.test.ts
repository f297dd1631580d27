import Database from "better-sqlite3"
import { Webhook } from "standardwebhooks"
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest"
import { runCliInProcess } from "../support/cliRun.js"
import { killAll, startServer, temporaryDatabase } from "../support/processes.js"
import { type ReceivedRequest, startWebhookReceiver, type WebhookReceiver } from "../support/webhookReceiver.js"

const secretKey = "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKL"
const givenSecret = `whsec_${Buffer.alloc(32, 7).toString("base64")}`
const settingSecret = `whsec_${Buffer.alloc(24, 9).toString("base64")}`

/** A receiver on 127.0.0.1 that records every request and answers the status set for its path (200 unless set). */
const received: Array<ReceivedRequest> = []
const statuses = new Map<string, number>()
let receiver: WebhookReceiver

beforeAll(async () => {
  receiver = await startWebhookReceiver({ received, answer: ({ path }) => statuses.get(path) })
})

afterAll(() => receiver.close())
afterEach(killAll)

const database = async (extra: Record<string, string> = {}) => {
  const url = temporaryDatabase()
  const vars = { SERVICE_DATABASE_URL: url, SERVICE_SECRET_KEY: secretKey, ...extra }
  expect((await runCliInProcess(["migrate"], vars, { timeout: 30_000 })).status).toBe(0)
  return { vars, filename: url.slice("sqlite:".length) }
}

const json = (text: string) => JSON.parse(text) as unknown
const waitFor = async (check: () => boolean, withinMs: number) => {
  const deadline = Date.now() + withinMs
  while (!check() && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 100))
  return check()
}

describe("portcullis webhook", () => {
  it("adds endpoints with their secrets sealed, lists them with the setting's, removes only its own, and audits each change", async () => {
    const setting = JSON.stringify([{ url: "https://setting.example/hook", secret: settingSecret, events: "*" }])
    const { vars, filename } = await database({ SERVICE_WEBHOOKS: setting })

    const made = await runCliInProcess(
      [
        "webhook",
        "add",
        "--url",
        "https://a.example/hook?token=kept-out-of-the-log",
        "--events",
        "after_register, session.revoked"
      ],
      vars
    )
    expect(made.status).toBe(0)
    const first = json(made.stdout) as { id: string; secret: string; events: unknown; source: string }
    expect(first.secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/)
    expect(first).toMatchObject({ events: ["after_register", "session.revoked"], source: "cli" })
    expect(made.stderr).toContain("not shown again")

    const given = await runCliInProcess(
      ["webhook", "add", "--url", "https://b.example/hook", "--events", "*", "--secret", givenSecret],
      vars
    )
    expect(given.status).toBe(0)
    const second = json(given.stdout) as { id: string; secret: string }
    expect(second.secret).toBe(givenSecret)

    // Refused, and nothing stored: the same URL again, the setting's URL, an unknown type, a bad secret.
    for (const [args, said] of [
      [["--url", "https://b.example/hook", "--events", "*"], "there already"],
      [["--url", "https://setting.example/hook", "--events", "*"], "there already"],
      [["--url", "https://c.example/hook", "--events", "after_register,nope"], "unknown event types: nope"],
      [["--url", "https://c.example/hook", "--events", "*", "--secret", "whsec_short"], "no valid secret"],
      [["--url", "ftp://c.example/hook", "--events", "*"], "not http:// or https://"]
    ] as const) {
      const refused = await runCliInProcess(["webhook", "add", ...args], vars)
      expect(refused.status).toBe(1)
      expect(refused.stderr).toContain(said)
      expect(refused.stderr).not.toContain("whsec_short")
    }

    // At rest the secrets are sealed: neither appears in the file.
    const db = new Database(filename, { readonly: true })
    const rows = db.prepare("SELECT id, sealed_secret FROM webhook_endpoints").all() as Array<{ sealed_secret: string }>
    db.close()
    expect(rows).toHaveLength(2)
    for (const row of rows) {
      expect(row.sealed_secret).not.toContain(first.secret.slice(6, 30))
      expect(row.sealed_secret).not.toContain(givenSecret.slice(6, 30))
    }

    const listed = await runCliInProcess(["webhook", "list"], vars)
    expect(listed.status).toBe(0)
    const endpoints = json(listed.stdout) as Array<{ id: string; url: string; source: string }>
    expect(endpoints.map(({ url, source }) => [url, source])).toEqual([
      ["https://setting.example/hook", "setting"],
      ["https://a.example/hook?token=kept-out-of-the-log", "cli"],
      ["https://b.example/hook", "cli"]
    ])
    expect(listed.stdout).not.toContain("whsec_")
    const fromSetting = endpoints[0]?.id ?? ""

    const notOurs = await runCliInProcess(["webhook", "remove", fromSetting], vars)
    expect(notOurs.status).toBe(1)
    expect(notOurs.stderr).toContain("SERVICE_WEBHOOKS")
    const unknown = await runCliInProcess(["webhook", "remove", "wh_nothing"], vars)
    expect(unknown.status).toBe(1)
    expect(unknown.stderr).toContain("No webhook endpoint has the id wh_nothing")
    expect((await runCliInProcess(["webhook", "remove", first.id], vars)).status).toBe(0)
    const left = json((await runCliInProcess(["webhook", "list"], vars)).stdout) as Array<{ id: string }>
    expect(left.map((endpoint) => endpoint.id)).toEqual([fromSetting, second.id])

    // Each change is in the audit log, with the endpoint's origin only: a token in its URL stays out.
    const audit = await runCliInProcess(["audit", "export", "--since", "1h", "--format", "jsonl"], vars)
    expect(audit.status).toBe(0)
    const events = audit.stdout
      .trim()
      .split("\n")
      .map((line) => JSON.parse(line) as { type: string; actor: { kind: string }; details: Record<string, unknown> })
    expect(events.map((event) => [event.type, event.details.endpoint])).toEqual([
      ["webhook.endpoint_added", first.id],
      ["webhook.endpoint_added", second.id],
      ["webhook.endpoint_removed", first.id]
    ])
    expect(events[0]).toMatchObject({
      actor: { kind: "cli" },
      details: { origin: "https://a.example", events: "after_register,session.revoked" }
    })
    expect(audit.stdout).not.toContain("kept-out-of-the-log")
  }, 120_000)

  it("test sends one signed webhook.test message and says what came of it", async () => {
    const { vars } = await database({ SERVICE_WEBHOOKS_ALLOW_PRIVATE: "true" })
    const add = (path: string) =>
      runCliInProcess(
        ["webhook", "add", "--url", `${receiver.base}${path}`, "--events", "*", "--secret", givenSecret],
        vars
      ).then((run) => (json(run.stdout) as { id: string }).id)
    const ok = await add("/cli-test-ok")
    const tested = await runCliInProcess(["webhook", "test", ok], vars)
    expect(tested.status).toBe(0)
    expect(tested.stdout).toContain("Delivered: the endpoint answered 200")
    const [message, ...more] = received.filter((request) => request.path === "/cli-test-ok")
    expect(more).toHaveLength(0)
    const verified = new Webhook(givenSecret).verify(message?.body ?? "", message?.headers as Record<string, string>)
    expect(verified).toMatchObject({ type: "webhook.test", data: { endpoint: ok } })
    expect(() =>
      new Webhook(settingSecret).verify(message?.body ?? "", message?.headers as Record<string, string>)
    ).toThrow()

    statuses.set("/cli-test-down", 503)
    const down = await runCliInProcess(["webhook", "test", await add("/cli-test-down")], vars)
    expect(down.status).toBe(1)
    expect(down.stderr).toContain("Not delivered")
    expect(down.stderr).toContain("503")

    // Without WEBHOOKS_ALLOW_PRIVATE a receiver on a loopback address is never reached.
    const before = received.length
    const refused = await runCliInProcess(["webhook", "test", ok], { ...vars, SERVICE_WEBHOOKS_ALLOW_PRIVATE: "false" })
    expect(refused.status).toBe(1)
    expect(refused.stderr).toMatch(/private|loopback/)
    expect(received.length).toBe(before)

    // A stored secret that does not open under the key in use is said, not sent unsigned.
    const otherKey = await runCliInProcess(["webhook", "test", ok], { ...vars, SERVICE_SECRET_KEY: `${secretKey}x` })
    expect(otherKey.status).toBe(1)
    expect(otherKey.stderr).toContain("does not open")
  }, 120_000)

  it("retry makes dead messages due again, from their first try", async () => {
    const { vars, filename } = await database()
    const db = new Database(filename)
    const dead = db.prepare(
      `INSERT INTO webhook_outbox (id, endpoint, type, body, created_at, attempts, next_attempt_at, dead_at, last_error)
        VALUES (?, 'wh_1', 'after_register', '{}', 1, 8, 1, 2, 'answered 500')`
    )
    for (const id of ["msg_one", "msg_two", "msg_three"]) dead.run(id)
    db.close()
    const state = () => {
      const reader = new Database(filename, { readonly: true })
      const rows = reader.prepare("SELECT id, attempts, dead_at FROM webhook_outbox ORDER BY seq").all()
      reader.close()
      return rows
    }

    const one = await runCliInProcess(["webhook", "retry", "msg_two"], vars)
    expect(one.stdout).toContain("1 dead message due again")
    expect(state()).toEqual([
      { id: "msg_one", attempts: 8, dead_at: 2 },
      { id: "msg_two", attempts: 0, dead_at: null },
      { id: "msg_three", attempts: 8, dead_at: 2 }
    ])
    const all = await runCliInProcess(["webhook", "retry", "--dead"], vars)
    expect(all.stdout).toContain("2 dead messages due again")
    expect(state()).toEqual([
      { id: "msg_one", attempts: 0, dead_at: null },
      { id: "msg_two", attempts: 0, dead_at: null },
      { id: "msg_three", attempts: 0, dead_at: null }
    ])
    for (const args of [
      ["webhook", "retry"],
      ["webhook", "retry", "msg_one", "--dead"]
    ]) {
      const refused = await runCliInProcess(args, vars)
      expect(refused.status).toBe(1)
      expect(refused.stderr).toContain("Give a message id or --dead")
    }
  }, 120_000)

  it("a running server sends to an endpoint added while it runs, and stops once it is removed", async () => {
    const { vars } = await database({ SERVICE_WEBHOOKS_ALLOW_PRIVATE: "true" })
    const server = await startServer(vars)
    const added = await runCliInProcess(
      ["webhook", "add", "--url", `${receiver.base}/live`, "--events", "after_register", "--secret", givenSecret],
      vars
    )
    const { id } = json(added.stdout) as { id: string }
    const registered = (email: string) =>
      received.filter((request) => request.path === "/live" && request.body.includes(email))
    const register = (email: string) =>
      fetch(`${server.url}/api/v1/auth/register`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ email, password: "correct horse battery staple" })
      })

    // Within the workers' refresh of the list (5 s), then the deliverer's next turn (1 s).
    await new Promise((resolve) => setTimeout(resolve, 6_000))
    expect((await register("first@example.com")).status).toBe(202)
    expect(await waitFor(() => registered("first@example.com").length === 1, 10_000)).toBe(true)
    const [message] = registered("first@example.com")
    expect(
      new Webhook(givenSecret).verify(message?.body ?? "", message?.headers as Record<string, string>)
    ).toMatchObject({
      type: "after_register",
      data: { user: { email: "first@example.com" } }
    })

    expect((await runCliInProcess(["webhook", "remove", id], vars)).status).toBe(0)
    await new Promise((resolve) => setTimeout(resolve, 6_000))
    expect((await register("second@example.com")).status).toBe(202)
    await new Promise((resolve) => setTimeout(resolve, 3_000))
    expect(registered("second@example.com")).toHaveLength(0)
    await server.stop()
  }, 120_000)

  it("warns when the endpoint is private and the service refuses private addresses, and adds it all the same", async () => {
    const { vars } = await database()
    const warning =
      /warning: nothing will be delivered there .*address (127\.0\.0\.1|::1) is private \(loopback\); SERVICE_WEBHOOKS_ALLOW_PRIVATE=true allows it/
    for (const url of ["http://127.0.0.1:9/literal", "http://localhost:9/by-name"]) {
      const added = await runCliInProcess(["webhook", "add", "--url", url, "--events", "*"], vars)
      expect(added.status, added.stderr).toBe(0)
      expect(added.stderr, url).toMatch(warning)
    }
    const listed = json((await runCliInProcess(["webhook", "list"], vars)).stdout) as ReadonlyArray<{ url: string }>
    expect(listed.map((endpoint) => endpoint.url)).toEqual(["http://127.0.0.1:9/literal", "http://localhost:9/by-name"])

    const allowed = await runCliInProcess(["webhook", "add", "--url", "http://127.0.0.1:9/allowed", "--events", "*"], {
      ...vars,
      SERVICE_WEBHOOKS_ALLOW_PRIVATE: "true"
    })
    expect(allowed.status).toBe(0)
    expect(allowed.stderr).not.toContain("warning")
  }, 60_000)
})

describe("portcullis audit export", () => {
  it("prints the log from --since on, oldest first, across pages, as JSON or one event a line", async () => {
    const { vars, filename } = await database()
    const now = Date.now()
    const db = new Database(filename)
    const insert = db.prepare(
      "INSERT INTO audit_events (occurred_at, event_type, actor_kind, details) VALUES (?, 'sign_in.failed', 'none', ?)"
    )
    // 2,500 events a minute apart, the oldest 2,500 minutes ago: more than two pages of 1,000.
    db.transaction(() => {
      for (let n = 0; n < 2_500; n++) insert.run(now - (2_500 - n) * 60_000, JSON.stringify({ n }))
    })()
    db.close()

    const since = new Date(now - 2_100 * 60_000).toISOString()
    const lines = await runCliInProcess(["audit", "export", "--since", since, "--format", "jsonl"], vars, {
      timeout: 60_000
    })
    expect(lines.status).toBe(0)
    const events = lines.stdout
      .trim()
      .split("\n")
      .map((line) => JSON.parse(line) as { id: number; details: { n: number }; occurred_at: string })
    expect(events).toHaveLength(2_100)
    expect(events[0]?.details.n).toBe(400)
    expect(events.at(-1)?.details.n).toBe(2_499)
    expect(events.every((event, index) => index === 0 || event.id > (events[index - 1]?.id ?? 0))).toBe(true)

    const array = await runCliInProcess(["audit", "export", "--since", "1d"], vars, { timeout: 60_000 })
    expect(array.status).toBe(0)
    const all = JSON.parse(array.stdout) as Array<{ details: { n: number } }>
    // A day back from when the command ran: the event of exactly a day before the seed may be just past it.
    const numbers = all.map((event) => event.details.n)
    expect(numbers[0]).toBeGreaterThanOrEqual(1_060)
    expect(numbers[0]).toBeLessThanOrEqual(1_061)
    expect(numbers).toEqual(Array.from({ length: 2_500 - (numbers[0] ?? 0) }, (_, i) => (numbers[0] ?? 0) + i))

    const none = await runCliInProcess(["audit", "export", "--since", new Date(now + 60_000).toISOString()], vars)
    expect(JSON.parse(none.stdout)).toEqual([])

    const bad = await runCliInProcess(["audit", "export", "--since", "last tuesday"], vars)
    expect(bad.status).toBe(1)
    expect(bad.stderr).toContain("--since")
  }, 120_000)
})
