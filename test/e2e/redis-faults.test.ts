import { randomBytes, randomUUID } from "node:crypto"
import { describe, expect, it } from "vitest"
import {
  type Account,
  Client,
  eventually,
  familyOf,
  faultsIn,
  Ledger,
  loadLoop,
  newPassword,
  type Running,
  sleep,
  type Tokens,
  watchEnded
} from "../support/faults.js"
import { type PrivateRedis, privateRedis, redisCommand } from "../support/privateRedis.js"
import { killAll, startServer, temporaryDatabase } from "../support/processes.js"
import { testRedisUrl } from "../support/redis.js"

/** The reset token the console mailer printed for `email` (one mail a block, from ┌ to └). */
const resetToken = async (output: () => string, email: string) => {
  for (let attempt = 0; attempt < 50; attempt++) {
    for (const mail of output().split("┌").slice(1)) {
      const block = mail.split("└")[0] ?? ""
      if (!block.includes("Reset your password") || !block.includes(`To:      ${email}\n`)) continue
      const token = /reset-password\?token=([\w.-]+)/.exec(block)?.[1]
      if (token !== undefined) return token
    }
    await sleep(100)
  }
  throw new Error(`no reset mail was logged for ${email}`)
}

/**
 * The five ways a session ends, each made ready ahead (accounts registered, sessions signed in,
 * a refresh token rotated, a reset mailed) so that only the request that ends it falls where the
 * test runs it. Answers the requests to run.
 */
const prepareEndings = async (ledger: Ledger, output: () => string, when: string) => {
  const { client } = ledger
  const account = async (label: string) => {
    const created = await ledger.register(`${label}-${when}`, [201])
    if (created === undefined) throw new Error(`registration failed: ${ledger.problems.join("; ")}`)
    return created
  }
  const session = async (owner: Account) => {
    const tokens = await ledger.signIn(owner, [200])
    if (tokens === undefined) throw new Error(`sign-in failed: ${ledger.problems.join("; ")}`)
    return tokens
  }

  const signedOut = await session(await account("logout"))

  const deleter = await account("delete-session")
  const [deleting, deleted] = [await session(deleter), await session(deleter)]

  const changer = await account("change-password")
  const [changing, changedAway] = [await session(changer), await session(changer)]

  const resetter = await account("reset")
  const resetAway = await session(resetter)
  ledger.check(
    await client.auth("POST", "/password-reset/request", { json: { email: resetter.email } }),
    [202],
    "password reset request"
  )
  const token = await resetToken(output, resetter.email)

  const reuser = await account("reuse")
  const first = await session(reuser)
  const rotated = await ledger.refresh(first, [200])
  const reused: ReadonlyArray<Tokens> = [{ access: first.access, refresh: undefined }, rotated]

  return [
    () => ledger.logout(signedOut, `a session ended by logout ${when} the fault`),
    async () =>
      ledger.ending(
        await client.auth("DELETE", `/sessions/${familyOf(deleted.access)}`, { token: deleting.access }),
        204,
        `a session ended by DELETE /sessions/{id} ${when} the fault`,
        [deleted]
      ),
    () =>
      ledger.changePassword(changer, changing, [changedAway], `a session ended by a password change ${when} the fault`),
    async () => {
      const next = newPassword()
      const answer = await client.auth("POST", "/password-reset/confirm", { json: { token, new_password: next } })
      ledger.passwordOutcome(resetter, next, answer, 200)
      ledger.ending(answer, 200, `a session ended by a password reset ${when} the fault`, [resetAway], {
        account: resetter,
        password: next
      })
    },
    async () =>
      ledger.ending(
        await client.auth("POST", "/refresh", { json: { refresh_token: first.refresh } }),
        401,
        `a session ended by refresh-token reuse ${when} the fault`,
        reused
      )
  ]
}

/** Six sign-ins of `owner` within a minute from one address of their own: their statuses. */
const sixSignIns = async (url: string, owner: Account) => {
  const headers = {
    "content-type": "application/json",
    "x-forwarded-for": `2001:db8:${randomBytes(2).toString("hex")}:${randomBytes(2).toString("hex")}::1`
  }
  const body = JSON.stringify({ email: owner.email, password: owner.password })
  const statuses: Array<number> = []
  for (let i = 0; i < 6; i++) {
    statuses.push((await fetch(`${url}/api/v1/auth/login`, { method: "POST", headers, body })).status)
  }
  return statuses.join()
}

/**
 * While Redis is unusable: signed-in requests go on, checked against the database's record of
 * ended sessions; rate limits and lockout hold, counted in the process, as /readyz says; the
 * process answers.
 */
const whileRedisIsDown = async (ledger: Ledger, live: Tokens, owner: Account) => {
  const { client } = ledger
  ledger.check(
    await client.auth("GET", "/me", { token: live.access }),
    [200],
    "GET /me of a live session while Redis is down"
  )
  ledger.check(await client.call("GET", "/healthz"), [200], "GET /healthz while Redis is down")
  await ledger.signIn(owner, [200])
  ledger.check(
    await client.auth("POST", "/login", { json: { email: `nobody-${randomUUID()}@example.com`, password: "wrong" } }),
    [401],
    "a wrong password while Redis is down (counted in the process)"
  )
  const signIns = await sixSignIns(client.url, owner)
  if (signIns !== "200,200,200,200,200,429")
    ledger.problems.push(`rate limits do not hold while Redis is down: six sign-ins answered ${signIns}`)
  const ready = await client.call("GET", "/readyz")
  if (ready.status !== 200 || ready.body?.protections !== "local")
    ledger.problems.push(`/readyz does not say so while Redis is down: ${ready.status} ${JSON.stringify(ready.body)}`)
}

/** Once Redis is back: the live session is served, and rate limits and lockout count in Redis again. */
const afterRecovery = async (ledger: Ledger, live: Tokens, owner: Account) => {
  const { client } = ledger
  // Redis is tried again in the background: the protections count there again once it is back.
  const shared = await eventually(
    async () => (await client.call("GET", "/readyz")).body?.protections === undefined,
    15_000
  )
  if (!shared) ledger.problems.push("rate limits and lockout still count in the process 15 s after Redis is back")
  const signIns = await sixSignIns(client.url, owner)
  if (signIns !== "200,200,200,200,200,429")
    ledger.problems.push(`rate limits do not hold after recovery: six sign-ins answered ${signIns}`)
  ledger.check(await client.auth("GET", "/me", { token: live.access }), [200], "GET /me of a live session after Redis")
  const stranger = { email: `locked-${randomUUID()}@example.com`, password: "wrong" }
  const statuses: Array<number> = []
  for (let attempt = 0; attempt < 6; attempt++)
    statuses.push((await client.auth("POST", "/login", { json: stranger })).status)
  if (statuses.join() !== "401,401,401,401,401,423") {
    ledger.problems.push(`lockout is not in force after recovery: six wrong passwords answered ${statuses.join()}`)
  }
}

interface Fault {
  readonly ledger: Ledger
  readonly redis: PrivateRedis
  /** The endings made ready for the fault, all at once. */
  readonly endings: () => Promise<unknown>
  /** The checks that hold while Redis is unusable. */
  readonly down: () => Promise<void>
}

/**
 * The service (SQLite file, REDIS_URL on a private Redis, rate limits and lockout on) under three
 * client loops and a watcher of ended sessions, with sessions ended in each of the five ways
 * before the fault and again while it lasts; then, once Redis is usable again: it recovered by
 * itself, no ended session's token is accepted, nothing acknowledged was lost, no answer was a
 * crash, a hang or a bare 5xx.
 */
const underLoad = async (
  persistent: boolean,
  fault: (context: Fault) => Promise<void>,
  { unusable = true }: { readonly unusable?: boolean } = {}
) => {
  const redis = await privateRedis({ persistent })
  const running: Array<Running> = []
  try {
    await redis.start()
    const server = await startServer({
      SERVICE_SECRET_KEY: "redis-faults-secret-key-of-at-least-32-bytes",
      SERVICE_DATABASE_URL: temporaryDatabase(),
      SERVICE_REDIS_URL: redis.url,
      SERVICE_AUTH_RATE_LIMIT_ENABLED: "true",
      SERVICE_LOCKOUT_ENABLED: "true",
      SERVICE_TRUSTED_PROXY_HEADERS: "x-forwarded-for",
      SERVICE_PREVENT_REGISTRATION_ENUMERATION: "false",
      SERVICE_SEND_VERIFICATION_ON_REGISTER: "false",
      SERVICE_MAILER: "console",
      SERVICE_LOG_LEVEL: "info"
    })
    const ledger = new Ledger(new Client(server.url))
    for (const end of await prepareEndings(ledger, server.output, "before")) await end()
    expect(ledger.uncertain).toEqual([])
    const during = await prepareEndings(ledger, server.output, "during")
    const owner = await ledger.register("live", [201])
    const live = owner === undefined ? undefined : await ledger.signIn(owner, [200])
    if (owner === undefined || live === undefined) throw new Error(ledger.problems.join("; "))

    running.push(loadLoop(ledger, "load-1"), loadLoop(ledger, "load-2"), loadLoop(ledger, "load-3"), watchEnded(ledger))
    await sleep(500)
    await fault({
      ledger,
      redis,
      endings: () => Promise.all(during.map((end) => end())),
      down: () => whileRedisIsDown(ledger, live, owner)
    })
    await afterRecovery(ledger, live, owner)
    await sleep(500)
    await Promise.all(running.splice(0).map((loop) => loop.stop()))

    const problems = [...ledger.problems, ...(await ledger.verify())]
    if (server.child.exitCode !== null || server.child.signalCode !== null) problems.push("the server process ended")
    // An outage shorter than a minute is one error line, however many requests met it.
    const faultLines = server
      .output()
      .split("\n")
      .filter((line) => line.includes("redis unusable")).length
    if (faultLines !== (unusable ? 1 : 0)) problems.push(`the outage was logged in ${faultLines} error lines`)
    // Every answer counts, the verification's included.
    expect([...problems, ...faultsIn(ledger.client.answers)]).toEqual([])
  } finally {
    await Promise.all(running.map((loop) => loop.stop()))
    await killAll()
    await redis.remove()
  }
}

// Runs where Redis suites run (TEST_REDIS_URL set: redis-server is installed), each case on a Redis of its own.
describe.skipIf(testRedisUrl === undefined)("Redis faults under load", () => {
  it(
    "stopped, then started again with what it kept: signed-in requests go on while down, and no ended session comes back",
    () =>
      underLoad(true, async ({ redis, endings, down }) => {
        await redis.stop()
        await down()
        await endings()
        await sleep(1_000)
        await redis.start()
      }),
    60_000
  )

  it(
    "restarted empty: no session ended before or while it was down comes back",
    () =>
      underLoad(false, async ({ redis, endings, down }) => {
        await redis.kill()
        await down()
        await endings()
        await sleep(1_000)
        await redis.start()
      }),
    60_000
  )

  it(
    "flushed (FLUSHALL) while running: no session ended before or during the flush comes back",
    () =>
      underLoad(
        false,
        async ({ ledger, redis, endings }) => {
          const [flushed] = await Promise.all([redisCommand(redis.port, "FLUSHALL"), endings()])
          await sleep(500)
          const again = await redisCommand(redis.port, "FLUSHALL")
          if (flushed !== "+OK" || again !== "+OK") ledger.problems.push(`FLUSHALL answered ${flushed} and ${again}`)
          await sleep(500)
        },
        { unusable: false }
      ),
    60_000
  )
})
