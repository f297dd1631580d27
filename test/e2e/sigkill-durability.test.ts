import { afterAll, describe, expect, it } from "vitest"
import { Client, Ledger, loadLoop, type Running, sleep } from "../support/faults.js"
import { type PrivatePostgres, privatePostgres, privatePostgresPossible } from "../support/privatePostgres.js"
import { freePort, killAll, type RunningServer, startServer, temporaryDatabase } from "../support/processes.js"

/**
 * A crash while the service acknowledges writes: `portcullis serve` (and, on PostgreSQL, the
 * database's every process too) killed with SIGKILL in the middle of a load that registers,
 * signs in, refreshes, changes passwords and signs out; then started again on the same database.
 * Nothing it acknowledged is lost: every acknowledged registration signs in with the password of
 * its last acknowledged change, no password a change replaced signs in, and no session whose end
 * was acknowledged (a sign-out, the other sessions a password change ends) is accepted again.
 * Requests the kill cut off are in doubt, and may have happened or not.
 *
 * What a kill cannot tell: whether the writes are on the disk, rather than in the system's cache,
 * which a process's death does not lose (only a power cut would). That the commits sync the disk
 * is held by sqlite-durability.test.ts (synchronous=FULL) and PostgreSQL's own commit.
 */

const kills = 3

const settings = (databaseUrl: string) => ({
  SERVICE_SECRET_KEY: "sigkill-durability-secret-key-of-32-bytes!",
  SERVICE_DATABASE_URL: databaseUrl,
  SERVICE_TRUSTED_PROXY_HEADERS: "x-forwarded-for",
  SERVICE_PREVENT_REGISTRATION_ENUMERATION: "false",
  SERVICE_SEND_VERIFICATION_ON_REGISTER: "false",
  SERVICE_LOG_LEVEL: "error"
})

/**
 * `kills` times: the load for a second or two, SIGKILL (and `crash`, at the same moment), then the
 * service started again on the same port and database. Answers the ledger's problems, those of
 * the requests the kill cut off aside.
 */
/** What the load has had acknowledged so far, of each kind of write. */
const acknowledgedOf = (ledger: Ledger) => ({
  registrations: ledger.accounts.length,
  passwordChanges: ledger.accounts.reduce((sum, account) => sum + account.retired.length, 0),
  endedSessions: ledger.ended.length
})

const acknowledgedEachKind = (ledger: Ledger) => Object.values(acknowledgedOf(ledger)).every((count) => count > 0)

const killedUnderLoad = async (
  databaseUrl: string,
  crash: () => Promise<void> = async () => {},
  recover: () => Promise<void> = async () => {}
) => {
  const port = await freePort()
  const start = () => startServer(settings(databaseUrl), { port })
  const ledger = new Ledger(new Client(`http://127.0.0.1:${port}`))
  let server: RunningServer = await start()
  const afterKill: Array<string> = []
  for (let round = 0; round < kills; round++) {
    const loops: Array<Running> = Array.from({ length: 4 }, (_, index) => loadLoop(ledger, `kill-${round}-${index}`))
    await sleep(1_000 + Math.random() * 1_500)
    // On a machine slow at hashing (or busy with other suites) the first seconds may acknowledge
    // no password change yet: the load goes on until each kind of write has been, so that there
    // is something to lose.
    for (let waited = 0; !acknowledgedEachKind(ledger) && waited < 30_000; waited += 250) await sleep(250)
    const before = ledger.problems.length
    server.child.kill("SIGKILL")
    await crash()
    await Promise.all(loops.map((loop) => loop.stop()))
    // What was in flight, or sent while the service was down, has no answer: in doubt, no fault.
    afterKill.push(...ledger.problems.splice(before).filter((problem) => !problem.includes("no answer")))
    await recover()
    server = await start()
  }
  const problems = [...ledger.problems, ...afterKill, ...(await ledger.verify())]
  const acknowledged = acknowledgedOf(ledger)
  await server.stop()
  return { problems, acknowledged }
}

afterAll(async () => {
  await killAll()
})

describe("SIGKILL while acknowledging writes", () => {
  it(`SQLite file: ${kills} kills of the service lose no acknowledged registration, password change or revocation`, async () => {
    const { problems, acknowledged } = await killedUnderLoad(temporaryDatabase())
    expect(problems).toEqual([])
    // The load did acknowledge each kind of write, so there was something to lose.
    expect(acknowledged.registrations).toBeGreaterThan(0)
    expect(acknowledged.passwordChanges).toBeGreaterThan(0)
    expect(acknowledged.endedSessions).toBeGreaterThan(0)
  }, 180_000)

  describe.skipIf(!privatePostgresPossible)("PostgreSQL", () => {
    let database: PrivatePostgres | undefined
    afterAll(async () => {
      await database?.remove()
    })

    it(`${kills} kills of the service and of every process of the database, together, lose no acknowledged write`, async () => {
      database = await privatePostgres()
      const cluster = database
      const { problems, acknowledged } = await killedUnderLoad(cluster.url, cluster.crash, cluster.start)
      expect(problems).toEqual([])
      expect(acknowledged.registrations).toBeGreaterThan(0)
      expect(acknowledged.passwordChanges).toBeGreaterThan(0)
      expect(acknowledged.endedSessions).toBeGreaterThan(0)
    }, 240_000)
  })
})
