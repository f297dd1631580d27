import Database from "better-sqlite3"
import { describe, expect, it } from "vitest"
import { lines, runCliInProcess } from "../support/cliRun.js"
import { temporaryDatabase } from "../support/processes.js"

const secretKey = "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKL"
const DAY = 86_400_000

/**
 * Rows a year of use leaves behind, written straight into the file: a session that expired a
 * month ago and its tokens, a session still live, and audit events from before and within
 * the 90 days kept, webhook messages settled over a week ago and yesterday, and the OpenID
 * Provider's codes, parked requests and grants, expired or ended and not.
 */
const seed = (filename: string) => {
  const db = new Database(filename)
  const now = Date.now()
  db.prepare("INSERT INTO users (id, email, created_at) VALUES ('u1', 'old@example.com', ?)").run(now - 400 * DAY)
  const family = db.prepare(
    "INSERT INTO token_families (family_id, user_id, created_at, last_used_at, expires_at) VALUES (?, 'u1', ?, ?, ?)"
  )
  const token = db.prepare("INSERT INTO refresh_tokens (digest, family_id, issued_at, expires_at) VALUES (?, ?, ?, ?)")
  family.run("gone", now - 60 * DAY, now - 60 * DAY, now - 30 * DAY)
  for (let n = 0; n < 3; n++) token.run(`gone-${n}`, "gone", now - 60 * DAY, now - 30 * DAY)
  family.run("live", now - DAY, now - DAY, now + 29 * DAY)
  token.run("live-0", "live", now - DAY, now + 29 * DAY)
  const event = db.prepare(
    "INSERT INTO audit_events (occurred_at, event_type, actor_kind, details) VALUES (?, 'account.locked', 'none', '{}')"
  )
  for (let n = 0; n < 5; n++) event.run(now - 100 * DAY)
  event.run(now - DAY)
  const request = db.prepare(
    "INSERT INTO email_sign_in_requests (email, token_digest, code_digest, created_at, expires_at) VALUES (?, ?, 'c', ?, ?)"
  )
  request.run("expired@example.com", "t1", now - DAY, now - DAY + 15 * 60_000)
  request.run("pending@example.com", "t2", now, now + 15 * 60_000)
  // An address change whose links expired yesterday, and the undos of changes made 8 and 2 days ago.
  db.prepare(
    `INSERT INTO email_changes (user_id, new_email, family_id, credential_version, new_token_digest, created_at, expires_at)
      VALUES ('u1', 'moving@example.com', 'f', 0, 'n1', ?, ?)`
  ).run(now - DAY - 60 * 60_000, now - DAY)
  const undo = db.prepare(
    `INSERT INTO email_change_undos (token_digest, user_id, old_email, new_email, changed_at, expires_at)
      VALUES (?, 'u1', ?, 'old@example.com', ?, ?)`
  )
  undo.run("u-old", "older@example.com", now - 8 * DAY, now - DAY)
  undo.run("u-live", "before@example.com", now - 2 * DAY, now + 5 * DAY)
  const message = db.prepare(
    `INSERT INTO webhook_outbox (id, endpoint, type, body, created_at, next_attempt_at, delivered_at, dead_at)
      VALUES (?, 'wh_1', 'after_register', '{}', ?, ?, ?, ?)`
  )
  message.run("delivered-long-ago", now - 9 * DAY, now - 9 * DAY, now - 8 * DAY, null)
  message.run("dead-long-ago", now - 9 * DAY, now - 9 * DAY, null, now - 8 * DAY)
  message.run("delivered-yesterday", now - DAY, now - DAY, now - DAY, null)
  // The provider's: a code expired yesterday and one just now (kept an access token's lifetime
  // more), a parked request expired and one waiting, a grant revoked yesterday and one live.
  db.prepare(
    `INSERT INTO oidc_clients (client_id, name, redirect_uris, post_logout_redirect_uris, scopes, grants, created_at)
      VALUES ('app', 'App', '[]', '[]', '[]', '[]', ?)`
  ).run(now - 9 * DAY)
  const code = db.prepare(
    `INSERT INTO oidc_codes (digest, client_id, user_id, redirect_uri, code_challenge, scopes, auth_time, amr, expires_at)
      VALUES (?, 'app', 'u1', 'https://app.example.com/cb', 'c', '[]', 0, '[]', ?)`
  )
  code.run("code-old", now - DAY)
  code.run("code-recent", now - 1000)
  const parked = db.prepare(
    "INSERT INTO oidc_requests (digest, client_id, request, parked_at, expires_at) VALUES (?, 'app', '{}', ?, ?)"
  )
  parked.run("parked-old", now - DAY, now - DAY + 15 * 60_000)
  parked.run("parked-waiting", now, now + 15 * 60_000)
  const grant = db.prepare(
    `INSERT INTO oidc_grants (grant_id, client_id, user_id, scopes, auth_time, amr, created_at, last_used_at, expires_at, revoked_at)
      VALUES (?, 'app', 'u1', '[]', 0, '[]', ?, ?, ?, ?)`
  )
  grant.run("grant-revoked", now - 2 * DAY, now - 2 * DAY, now + 28 * DAY, now - DAY)
  grant.run("grant-live", now - DAY, now - DAY, now + 29 * DAY, null)
  db.prepare(
    "INSERT INTO oidc_refresh_tokens (digest, grant_id, issued_at, expires_at) VALUES ('gt-1', 'grant-revoked', ?, ?)"
  ).run(now - 2 * DAY, now + 28 * DAY)
  // Clients that registered themselves: one idle past 30 days, one as old whose grant was used
  // yesterday, one registered two days ago; the operator's `app` is never idle.
  const agent = db.prepare(
    `INSERT INTO oidc_clients (client_id, name, public, self_registered, redirect_uris, post_logout_redirect_uris, scopes, grants, created_at)
      VALUES (?, ?, 1, 1, '[]', '[]', '[]', '[]', ?)`
  )
  agent.run("agent-idle", "Idle agent", now - 40 * DAY)
  agent.run("agent-used", "Used agent", now - 40 * DAY)
  agent.run("agent-new", "New agent", now - 2 * DAY)
  db.prepare(
    `INSERT INTO oidc_grants (grant_id, client_id, user_id, scopes, auth_time, amr, created_at, last_used_at, expires_at)
      VALUES ('grant-of-agent', 'agent-used', 'u1', '[]', 0, '[]', ?, ?, ?)`
  ).run(now - 40 * DAY, now - DAY, now + 29 * DAY)
  db.close()
}

const count = (filename: string, table: string) => {
  const db = new Database(filename, { readonly: true })
  const { n } = db.prepare(`SELECT COUNT(*) AS n FROM ${table}`).get() as { n: number }
  db.close()
  return n
}

describe("portcullis prune", () => {
  it("counts with --dry-run, then deletes what has outlived its purpose and rewrites the file with --vacuum", {
    timeout: 120_000
  }, async () => {
    const url = temporaryDatabase()
    const filename = url.slice("sqlite:".length)
    const vars = { SERVICE_DATABASE_URL: url, SERVICE_SECRET_KEY: secretKey }
    expect((await runCliInProcess(["migrate"], vars, { timeout: 30_000 })).status).toBe(0)
    seed(filename)

    const dry = await runCliInProcess(["prune", "--dry-run"], vars, { timeout: 30_000 })
    expect(dry.stderr).toBe("")
    expect(dry.status).toBe(0)
    expect(lines(dry.stdout)).toEqual([
      "refresh tokens to delete: 3",
      "sessions to delete: 1",
      "sealed successors to clear: 0",
      "audit events to delete: 5",
      "sign-in requests to delete: 1",
      "address changes to delete: 2",
      "webhook messages to delete: 2",
      "provider codes to delete: 1",
      "provider sign-in requests to delete: 1",
      "provider grants to delete: 1",
      "idle self-registered clients to delete: 1"
    ])
    expect(count(filename, "refresh_tokens")).toBe(4)

    const run = await runCliInProcess(["prune", "--vacuum"], vars, { timeout: 30_000 })
    expect(run.stderr).toBe("")
    expect(run.status).toBe(0)
    const output = lines(run.stdout)
    expect(output.slice(0, 11)).toEqual([
      "refresh tokens deleted: 3",
      "sessions deleted: 1",
      "sealed successors cleared: 0",
      "audit events deleted: 5",
      "sign-in requests deleted: 1",
      "address changes deleted: 2",
      "webhook messages deleted: 2",
      "provider codes deleted: 1",
      "provider sign-in requests deleted: 1",
      "provider grants deleted: 1",
      "idle self-registered clients deleted: 1"
    ])
    expect(output[11]).toMatch(/^vacuum: \d+\.\d MB -> \d+\.\d MB$/)
    expect(count(filename, "refresh_tokens")).toBe(1)
    expect(count(filename, "token_families")).toBe(1)
    expect(count(filename, "audit_events")).toBe(1)
    expect(count(filename, "email_sign_in_requests")).toBe(1)
    expect(count(filename, "email_changes")).toBe(0)
    expect(count(filename, "email_change_undos")).toBe(1)
    expect(count(filename, "webhook_outbox")).toBe(1)
    expect(count(filename, "oidc_codes")).toBe(1)
    expect(count(filename, "oidc_requests")).toBe(1)
    expect(count(filename, "oidc_grants")).toBe(2)
    // The idle agent is gone; the used one, the new one and the operator's client stay.
    expect(count(filename, "oidc_clients")).toBe(3)
    expect(count(filename, "oidc_refresh_tokens")).toBe(0)

    const again = await runCliInProcess(["prune"], vars, { timeout: 30_000 })
    expect(lines(again.stdout)).toEqual([
      "refresh tokens deleted: 0",
      "sessions deleted: 0",
      "sealed successors cleared: 0",
      "audit events deleted: 0",
      "sign-in requests deleted: 0",
      "address changes deleted: 0",
      "webhook messages deleted: 0",
      "provider codes deleted: 0",
      "provider sign-in requests deleted: 0",
      "provider grants deleted: 0",
      "idle self-registered clients deleted: 0"
    ])
  })
})
