import { randomUUID } from "node:crypto"
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { afterAll, describe, expect, it } from "vitest"
import { withinBoundsOnSomeAttempt } from "../support/attempts.js"
import { killAll, type RunningServer, startServer } from "../support/processes.js"

/**
 * A real server process under a steady mixed load: `npm run test:soak` (in .ci/run, never inside
 * `npm test`) lasts about three minutes, `npm run soak` (SOAK_SECONDS) as long as one likes, with
 * the same code. The server measures its own event loop through a preloaded monitor
 * (test/support/loop-monitor.mjs); its RSS is read from /proc.
 *
 * On a loaded machine the server gets less of a core: it answers fewer requests in the time
 * given, and its event loop waits for the CPU as well as for its own work. So the measured phase
 * runs on until it has sent the requests the memory bound needs, and a run whose event-loop
 * figures alone miss their bounds is soaked once more on a fresh server, the first run's figures
 * printed (support/attempts.ts); a 5xx, an unexpected answer or memory growth fails at once.
 */
const totalSeconds = Number(process.env.SOAK_SECONDS ?? "180")
/** Long enough for V8's heap, SQLite's page cache and the connections to reach their working size. */
const warmupSeconds = 30
/**
 * The last seconds send nothing but logins, from two clients. At one request in twenty, as in
 * the mix, a hash on the event loop hides under the p99 bound (with a synchronous argon2 the
 * mix's p99 was 26 to 42 ms, no worse than with the real one), and even with every request
 * hashing, delays stay short, as a timer due during a 12 ms hash waits 6 ms on average (a
 * median delay of 5 to 7 ms with a synchronous argon2, 1 to 2 ms with the real one). What such a hash cannot hide is the loop's
 * busy time: with two logins always in flight, a loop that hashes never idles (99% busy seen),
 * while one that hands hashes to libuv's threads runs only their JavaScript (43% seen on a
 * server not yet warm, on a busy machine).
 */
const burstSeconds = 10
const burstConcurrency = 2
const maxBurstUtilisation = 0.8
const measuredSeconds = Math.max(30, totalSeconds - warmupSeconds - burstSeconds)
/** Virtual users, each one request at a time: a steady load two shared cores can carry. */
const concurrency = 4

/**
 * Growth allowed after the warm-up, both measured once the server has collected its garbage
 * (see loop-monitor.mjs). A leak of 2 KB a request amounts to 32 MB over 16,384 requests, and
 * the measured phase must send at least that many (a CI run sends several times more; with
 * fewer the bound would prove nothing, so the phase runs on until it has, and the run fails if
 * it cannot within longestMeasuredSeconds), so such a leak cannot pass; if it is
 * on the JS heap, half that already breaks the heap bound. What grows and is no leak: the
 * memory blacklist keeps each spent single-use token (OAuth states) until it expires, SQLite's
 * page cache fills up, and the allocator keeps some of the pages it used. Ended sessions are
 * kept in the database, not in memory. Seen on a busy
 * 2-core machine: RSS +3 to 13 MB and heap +0.1 to 4.4 MB over 35,000 to 64,000 requests;
 * over ten minutes and 183,000 requests, RSS +15 MB and heap +1.9 MB.
 */
const rssBoundBytes = 32 * 1024 * 1024
const heapBoundBytes = 16 * 1024 * 1024
const leakBytesPerRequest = 2 * 1024
const minimumRequests = Math.ceil(rssBoundBytes / leakBytesPerRequest)
/** How long the measured phase may run on to send `minimumRequests` on a slow or loaded machine. */
const longestMeasuredSeconds = 3 * measuredSeconds
const maxLoopDelayP99Ms = 50
/** Soaks in all, each on a fresh server, when only the event-loop figures miss their bounds. */
const attempts = 2

const password = "correct horse battery staple"
const monitor = fileURLToPath(new URL("../support/loop-monitor.mjs", import.meta.url))

interface Session {
  readonly email: string
  access: string
  refresh: string
}

/** One virtual user's accounts and live sessions: it alone uses them, so every answer is predictable. */
interface VirtualUser {
  readonly accounts: Array<string>
  readonly sessions: Array<Session>
  /** Access tokens of sessions it ended, to check that they stay refused. */
  readonly ended: Array<string>
}

interface Tally {
  requests: number
  hashing: number
  readonly statuses: Map<number, number>
  readonly unexpected: Array<string>
  readonly latencies: Array<number>
}

const newTally = (): Tally => ({ requests: 0, hashing: 0, statuses: new Map(), unexpected: [], latencies: [] })

const pick = <A>(items: ReadonlyArray<A>): A => {
  const item = items[Math.floor(Math.random() * items.length)]
  if (item === undefined) throw new Error("picked from an empty list")
  return item
}

const percentile = (values: ReadonlyArray<number>, p: number) => {
  const sorted = [...values].sort((a, b) => a - b)
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? 0
}

const mb = (bytes: number) => (bytes / (1024 * 1024)).toFixed(1)
const percent = (share: number) => `${(100 * share).toFixed(0)}%`

const residentBytes = (pid: number) => {
  const match = /^VmRSS:\s+(\d+) kB$/m.exec(readFileSync(`/proc/${pid}/status`, "utf8"))
  if (match?.[1] === undefined) throw new Error(`no VmRSS for process ${pid}`)
  return Number(match[1]) * 1024
}

interface MonitorLine {
  readonly mark: boolean
  readonly phase: number
  readonly run: { readonly count: number; readonly p50: number; readonly p99: number; readonly max: number }
  readonly utilization: number
  readonly heapUsed: number
}

const monitorLines = (file: string): ReadonlyArray<MonitorLine> =>
  existsSync(file)
    ? readFileSync(file, "utf8")
        .split("\n")
        .filter((line) => line !== "")
        .map((line) => JSON.parse(line) as MonitorLine)
    : []

describe.skipIf(process.platform !== "linux")("soak: a server process under a steady mixed load", () => {
  const folder = mkdtempSync(join(tmpdir(), "portcullis-soak-"))
  let server: RunningServer

  afterAll(async () => {
    await killAll()
    rmSync(folder, { recursive: true, force: true })
  })

  /**
   * One soak on a server of its own: everything but the load-bound figures is asserted here, and
   * fails at once; those figures are answered, for the retry below.
   */
  const soakOnce = async (attempt: number) => {
    const monitorFile = join(folder, `loop-${attempt}.jsonl`)
    server = await startServer({
      SERVICE_SECRET_KEY: "soak-secret-key-of-at-least-32-bytes!!!!",
      SERVICE_DATABASE_URL: `sqlite:${join(folder, `db-${attempt}.sqlite`)}`,
      SERVICE_AUTH_RATE_LIMIT_ENABLED: "false",
      // Wrong-password logins are part of the mix; a lock would turn them into 423s.
      SERVICE_LOCKOUT_ENABLED: "false",
      // Access logs would pile up in this process's copy of the output, not measure the server.
      SERVICE_LOG_LEVEL: "warning",
      NODE_OPTIONS: `--import ${monitor}`,
      // Argon2's 19 MiB work area: after the first one is freed glibc raises its mmap threshold
      // and keeps such blocks in per-thread arenas, so RSS would move in 19 MiB steps with
      // whichever hashing thread last held one. A fixed threshold hands each back when freed.
      MALLOC_MMAP_THRESHOLD_: "131072",
      LOOP_MONITOR_FILE: monitorFile
    })
    const pid = server.child.pid
    if (pid === undefined) throw new Error("the server has no pid")
    const base = `${server.url}/api/v1/auth`

    let tally = newTally()
    const send = async (
      label: string,
      expected: number,
      method: string,
      path: string,
      init: { json?: unknown; raw?: string; token?: string; hashing?: boolean } = {}
    ) => {
      const headers: Record<string, string> = {}
      if (init.json !== undefined || init.raw !== undefined) headers["content-type"] = "application/json"
      if (init.token !== undefined) headers.authorization = `Bearer ${init.token}`
      const body = init.json === undefined ? init.raw : JSON.stringify(init.json)
      const started = performance.now()
      let status = 0
      let parsed: unknown
      try {
        const response = await fetch(base + path, {
          method,
          headers,
          signal: AbortSignal.timeout(10_000),
          ...(body === undefined ? {} : { body })
        })
        status = response.status
        const text = await response.text()
        parsed = text === "" ? undefined : JSON.parse(text)
      } catch (error) {
        parsed = String(error)
      }
      tally.requests++
      if (init.hashing === true) tally.hashing++
      tally.latencies.push(performance.now() - started)
      tally.statuses.set(status, (tally.statuses.get(status) ?? 0) + 1)
      if (status !== expected && tally.unexpected.length < 20) {
        tally.unexpected.push(
          `${label}: ${method} ${path} answered ${status}, expected ${expected}: ${JSON.stringify(parsed)}`
        )
      }
      return { ok: status === expected, body: parsed as Record<string, unknown> }
    }

    const register = async (user: VirtualUser) => {
      const email = `soak-${randomUUID()}@example.com`
      const reply = await send("register", 202, "POST", "/register", { json: { email, password }, hashing: true })
      if (reply.ok) user.accounts.push(email)
    }
    const login = async (user: VirtualUser) => {
      // The account with the fewest sessions, so no account's session list grows with time.
      const counts = user.accounts.map((email) => user.sessions.filter((s) => s.email === email).length)
      const email = user.accounts[counts.indexOf(Math.min(...counts))]
      if (email === undefined) return
      const reply = await send("login", 200, "POST", "/login", { json: { email, password }, hashing: true })
      if (reply.ok) {
        user.sessions.push({
          email,
          access: String(reply.body.access_token),
          refresh: String(reply.body.refresh_token)
        })
      }
    }
    const end = (user: VirtualUser, session: Session) => {
      user.sessions.splice(user.sessions.indexOf(session), 1)
      user.ended.push(session.access)
      if (user.ended.length > 5) user.ended.shift()
    }

    // Weights out of 186. Reads and refreshes dominate, as in real traffic; logins, failed
    // logins and registrations, with the logins of a user whose sessions have all ended, come
    // to about one request in twenty: the share that hashes.
    const actions: ReadonlyArray<readonly [number, (user: VirtualUser, session: Session) => Promise<unknown>]> = [
      [90, (_, session) => send("me", 200, "GET", "/me", { token: session.access })],
      [
        30,
        async (user, session) => {
          const reply = await send("sessions", 200, "GET", "/sessions", { token: session.access })
          const listed = reply.body as unknown as ReadonlyArray<{ current: boolean }>
          const own = user.sessions.filter((s) => s.email === session.email).length
          const current = reply.ok ? listed.filter((s) => s.current).length : 1
          if (reply.ok && (listed.length !== own || current !== 1)) {
            tally.unexpected.push(`sessions: listed ${listed.length} (${current} current), expected ${own} (1 current)`)
          }
        }
      ],
      [
        30,
        async (_, session) => {
          const reply = await send("refresh", 200, "POST", "/refresh", { json: { refresh_token: session.refresh } })
          if (reply.ok) {
            session.access = String(reply.body.access_token)
            session.refresh = String(reply.body.refresh_token)
          }
        }
      ],
      [
        6,
        async (user, session) => {
          if ((await send("logout", 204, "POST", "/logout", { token: session.access })).ok) end(user, session)
        }
      ],
      [
        1,
        async (user, session) => {
          // Reuse of a rotated refresh token burns its family, access token included.
          const rotated = await send("rotate", 200, "POST", "/refresh", { json: { refresh_token: session.refresh } })
          if (!rotated.ok) return
          await send("reuse", 401, "POST", "/refresh", { json: { refresh_token: session.refresh } })
          await send("burned", 401, "GET", "/me", { token: String(rotated.body.access_token) })
          end(user, session)
        }
      ],
      [5, (user) => login(user)],
      [
        1,
        (user) =>
          send("wrong password", 401, "POST", "/login", {
            json: { email: pick(user.accounts), password: "not the password" },
            hashing: true
          })
      ],
      [1, (user) => register(user)],
      [3, () => send("no token", 401, "GET", "/me")],
      [3, () => send("bad token", 401, "GET", "/me", { token: "not.a.jwt" })],
      [3, () => send("bad refresh", 401, "POST", "/refresh", { json: { refresh_token: randomUUID() } })],
      [3, () => send("malformed JSON", 422, "POST", "/login", { raw: '{"email": ' })],
      [3, () => send("missing field", 422, "POST", "/register", { json: { email: "x@example.com" } })],
      [2, () => send("unknown route", 404, "GET", "/no-such-route")],
      [2, () => send("wrong method", 405, "DELETE", "/login")],
      [
        3,
        async (user) => {
          const token = user.ended[0]
          if (token !== undefined) await send("ended session", 401, "GET", "/me", { token })
        }
      ]
    ]
    const totalWeight = actions.reduce((sum, [weight]) => sum + weight, 0)
    const chooseAction = () => {
      let roll = Math.random() * totalWeight
      for (const [weight, action] of actions) {
        roll -= weight
        if (roll < 0) return action
      }
      return actions[0]?.[1]
    }

    type Step = (user: VirtualUser) => Promise<unknown>
    const mixed: Step = async (user) => {
      const session = user.sessions.length === 0 ? undefined : pick(user.sessions)
      if (session === undefined) await login(user)
      else await chooseAction()?.(user, session)
    }
    const hashingOnly: Step = (user) =>
      send("hashing burst", 401, "POST", "/login", {
        json: { email: pick(user.accounts), password: "not the password" },
        hashing: true
      })

    let stopAt = 0
    let requestsWanted = 0
    let latestStop = 0
    const going = () => Date.now() < stopAt || (tally.requests < requestsWanted && Date.now() < latestStop)
    const runUser = (step: Step) => async () => {
      const user: VirtualUser = { accounts: [], sessions: [], ended: [] }
      await register(user)
      while (going()) await step(user)
    }

    let peakRss = 0
    const sampler = setInterval(() => {
      peakRss = Math.max(peakRss, residentBytes(pid))
    }, 1_000)

    /** `seconds` of `step`, and longer if need be (up to `longest`) until `requests` were sent. */
    const phase = async (seconds: number, step: Step, clients = concurrency, requests = 0, longest = seconds) => {
      tally = newTally()
      const started = Date.now()
      stopAt = started + seconds * 1_000
      requestsWanted = requests
      latestStop = started + longest * 1_000
      await Promise.all(Array.from({ length: clients }, runUser(step)))
      return { tally, elapsed: (Date.now() - started) / 1_000 }
    }
    /** Ends the monitor's phase; answers its figures and the RSS once the server has collected its garbage. */
    const markPhase = async () => {
      const marks = monitorLines(monitorFile).filter((line) => line.mark).length
      server.child.kill("SIGUSR2")
      const deadline = Date.now() + 10_000
      while (Date.now() < deadline) {
        const marked = monitorLines(monitorFile).filter((line) => line.mark)
        const line = marked[marks]
        if (line !== undefined) return { ...line, rss: residentBytes(pid) }
        await new Promise((resolve) => setTimeout(resolve, 50))
      }
      throw new Error("the loop monitor wrote no mark")
    }

    let warm: Awaited<ReturnType<typeof phase>>
    let measured: Awaited<ReturnType<typeof phase>>
    let burst: Awaited<ReturnType<typeof phase>>
    let afterWarmup: Awaited<ReturnType<typeof markPhase>>
    let loop: Awaited<ReturnType<typeof markPhase>>
    let burstLoop: Awaited<ReturnType<typeof markPhase>>
    try {
      warm = await phase(warmupSeconds, mixed)
      afterWarmup = await markPhase()
      measured = await phase(measuredSeconds, mixed, concurrency, minimumRequests, longestMeasuredSeconds)
      loop = await markPhase()
      burst = await phase(burstSeconds, hashingOnly, burstConcurrency)
      burstLoop = await markPhase()
    } finally {
      clearInterval(sampler)
    }

    const rssWarm = afterWarmup.rss
    const rssEnd = loop.rss
    const { requests, hashing, statuses, unexpected, latencies } = measured.tally
    const fivexx = [warm, measured, burst].flatMap((run) =>
      [...run.tally.statuses].filter(([status]) => status >= 500 || status === 0)
    )
    console.log(
      [
        `soak: ${requests} requests in ${measured.elapsed.toFixed(0)} s after a ${warmupSeconds} s warm-up = ${(requests / measured.elapsed).toFixed(0)} requests/s at ${concurrency} concurrent clients`,
        `  hashing requests ${((100 * hashing) / requests).toFixed(1)}%; client latency p50 ${percentile(latencies, 50).toFixed(1)} ms, p99 ${percentile(latencies, 99).toFixed(1)} ms`,
        `  statuses ${JSON.stringify(Object.fromEntries(statuses))}`,
        `  server RSS after a full collection: warm ${mb(rssWarm)} MB, end ${mb(rssEnd)} MB (growth ${mb(rssEnd - rssWarm)} MB, bound ${mb(rssBoundBytes)} MB); heap used warm ${mb(afterWarmup.heapUsed)} MB, end ${mb(loop.heapUsed)} MB (bound ${mb(heapBoundBytes)} MB); peak RSS under load ${mb(peakRss)} MB`,
        `  server event loop over the measured run: delay p50 ${loop.run.p50} ms, p99 ${loop.run.p99} ms, max ${loop.run.max} ms (${loop.run.count} samples); busy ${percent(loop.utilization)}`,
        `  hashing burst: ${(burst.tally.requests / burst.elapsed).toFixed(0)} failed logins/s; event loop busy ${percent(burstLoop.utilization)} (at most ${percent(maxBurstUtilisation)}), delay p50 ${burstLoop.run.p50} ms, p99 ${burstLoop.run.p99} ms`
      ].join("\n")
    )

    expect(fivexx, "no 5xx and no failed request in any phase").toEqual([])
    expect(unexpected, "every answer as expected").toEqual([])
    expect(warm.tally.unexpected, "every warm-up answer as expected").toEqual([])
    expect(burst.tally.unexpected, "every answer of the hashing burst as expected").toEqual([])
    expect(requests, "enough requests for the memory bound to catch a 2 KB-per-request leak").toBeGreaterThanOrEqual(
      minimumRequests
    )
    expect(rssEnd - rssWarm, "RSS growth after the warm-up").toBeLessThan(rssBoundBytes)
    expect(loop.heapUsed - afterWarmup.heapUsed, "heap growth after the warm-up").toBeLessThan(heapBoundBytes)
    expect(loop.run.count, "the loop monitor sampled the run").toBeGreaterThan(measuredSeconds * 10)

    // Still healthy: probes answer, and a whole new account works end to end.
    expect((await fetch(`${server.url}/healthz`)).status).toBe(200)
    expect((await fetch(`${server.url}/readyz`)).status).toBe(200)
    tally = newTally()
    const user: VirtualUser = { accounts: [], sessions: [], ended: [] }
    await register(user)
    await login(user)
    const session = user.sessions[0]
    expect(session).toBeDefined()
    if (session !== undefined) await send("me", 200, "GET", "/me", { token: session.access })
    expect(tally.unexpected).toEqual([])
    expect(server.child.exitCode).toBeNull()
    const exit = await server.stop()
    expect(exit.code, `stopped cleanly:\n${server.output()}`).toBe(0)
    return { loopDelayP99: loop.run.p99, burstUtilisation: burstLoop.utilization }
  }

  it(
    `stays flat in memory, responsive, free of 5xx and healthy (${totalSeconds} s at ${concurrency} concurrent clients)`,
    async () => {
      const { loopDelayP99, burstUtilisation } = await withinBoundsOnSomeAttempt({
        label: "soak",
        attempts,
        measure: soakOnce,
        outOfBounds: ({ loopDelayP99, burstUtilisation }) => [
          ...(loopDelayP99 < maxLoopDelayP99Ms
            ? []
            : [`event-loop delay p99 ${loopDelayP99} ms (under ${maxLoopDelayP99Ms} ms expected)`]),
          ...(burstUtilisation < maxBurstUtilisation
            ? []
            : [
                `event-loop busy ${percent(burstUtilisation)} while every request hashes (under ${percent(maxBurstUtilisation)} expected)`
              ])
        ]
      })
      expect(loopDelayP99, "event-loop delay p99 in ms").toBeLessThan(maxLoopDelayP99Ms)
      expect(burstUtilisation, "event-loop utilisation while every request hashes").toBeLessThan(maxBurstUtilisation)
    },
    attempts * (longestMeasuredSeconds + warmupSeconds + burstSeconds + 90) * 1_000
  )
})
