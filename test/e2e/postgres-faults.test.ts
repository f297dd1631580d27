import { afterAll, beforeAll, describe, expect, it } from "vitest"
import {
  type Account,
  Client,
  eventually,
  faultsIn,
  Ledger,
  loadLoop,
  type Running,
  sleep,
  type Tokens,
  watchEnded
} from "../support/faults.js"
import { type PrivatePostgres, privatePostgres, privatePostgresPossible } from "../support/privatePostgres.js"
import { killAll, type RunningServer, startServer } from "../support/processes.js"

/** Longer than the store timeout (5 s): every request caught in it has to give up and answer 503. */
const frozenForMs = 8_000

describe.skipIf(!privatePostgresPossible)("PostgreSQL faults under load", () => {
  let database: PrivatePostgres | undefined
  let server: RunningServer

  beforeAll(async () => {
    database = await privatePostgres()
    server = await startServer({
      SERVICE_SECRET_KEY: "postgres-faults-secret-key-of-at-least-32-bytes",
      SERVICE_DATABASE_URL: database.url,
      SERVICE_TRUSTED_PROXY_HEADERS: "x-forwarded-for",
      SERVICE_PREVENT_REGISTRATION_ENUMERATION: "false",
      SERVICE_SEND_VERIFICATION_ON_REGISTER: "false",
      SERVICE_LOG_LEVEL: "warning"
    })
  }, 90_000)

  afterAll(async () => {
    await killAll()
    await database?.remove()
  })

  /**
   * While the database is unusable, asked all at once: a 503 where a request needs it, within the
   * store timeout (a sign-in too, which holds interruption off while it decides its attempt), and
   * a process that answers.
   */
  const whileUnusable = async (ledger: Ledger, live: Tokens, owner: Account) => {
    const { client } = ledger
    const [me, ready, healthy] = await Promise.all([
      client.auth("GET", "/me", { token: live.access }),
      client.call("GET", "/readyz"),
      client.call("GET", "/healthz"),
      ledger.signIn(owner, [503])
    ])
    ledger.check(me, [503], "GET /me while the database is unusable")
    ledger.check(ready, [503], "GET /readyz while the database is unusable")
    ledger.check(healthy, [200], "GET /healthz while the database is unusable")
  }

  /**
   * The service under three client loops and a watcher of ended sessions while `fault` happens to
   * its database; then, once it is back: the service recovered by itself, nothing it acknowledged
   * (registration, password change, logout) was lost, and no answer was a crash, a hang, a bare
   * 5xx or later than the store timeout plus a little.
   */
  const underLoad = async (fault: (ledger: Ledger, live: Tokens, owner: Account) => Promise<void>) => {
    const ledger = new Ledger(new Client(server.url))
    const owner = await ledger.register("live", [201])
    const live = owner === undefined ? undefined : await ledger.signIn(owner, [200])
    if (owner === undefined || live === undefined) throw new Error(ledger.problems.join("; "))
    const running: Array<Running> = [
      loadLoop(ledger, "load-1"),
      loadLoop(ledger, "load-2"),
      loadLoop(ledger, "load-3"),
      watchEnded(ledger)
    ]
    try {
      await sleep(1_000)
      await fault(ledger, live, owner)
      const back = await eventually(
        async () =>
          (await ledger.client.call("GET", "/readyz")).status === 200 &&
          (await ledger.client.auth("GET", "/me", { token: live.access })).status === 200,
        20_000
      )
      if (!back) ledger.problems.push("not serving again 20 s after the database is usable again")
      await sleep(1_000)
    } finally {
      await Promise.all(running.map((loop) => loop.stop()))
    }
    const problems = [...ledger.problems, ...(await ledger.verify())]
    if (server.child.exitCode !== null || server.child.signalCode !== null) problems.push("the server process ended")
    // Every answer counts, the verification's included.
    const faults = [...problems, ...faultsIn(ledger.client.answers)]
    if (faults.length > 0)
      console.error(
        server
          .output()
          .split("\n")
          .filter((line) => /ERROR|FATAL|defect|500/i.test(line))
          .join("\n")
      )
    expect(faults).toEqual([])
  }

  it(
    "restarted (pg_ctl stop -m fast, then start): 503 while it is down, then serving again with nothing acknowledged lost",
    () =>
      underLoad(async (ledger, live, owner) => {
        await database?.stop()
        await whileUnusable(ledger, live, owner)
        await sleep(1_500)
        await database?.start()
      }),
    60_000
  )

  it(
    "frozen (SIGSTOP) for longer than the store timeout: no request hangs, every one caught in it answers 503 in time, then all is well again",
    () =>
      underLoad(async (ledger, live, owner) => {
        const frozenAt = Date.now()
        database?.freeze()
        try {
          await whileUnusable(ledger, live, owner)
          await sleep(frozenAt + frozenForMs - Date.now())
        } finally {
          database?.thaw()
        }
      }),
    60_000
  )
})
