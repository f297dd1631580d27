// `npm run bench:scale`: Portcullis on a large database against itself on a small one (docs/operating.md,
// "Data over time"). For SQLite, and PostgreSQL when TEST_DATABASE_URL is set, it seeds a database of
// SCALE_USERS users (1,000,000) with a session each, five refresh tokens a session and five audit
// events a user, and one of a thousand users alike, then:
// - loads login, GET /me and POST /refresh on both, in alternated rounds (BENCH_ROUNDS, 3; the
//   median round of each), and draws the large one's ratio to the small one's;
// - loads GET /sessions of a user with 5,000 ended sessions and one live against a user with one;
// - probes /healthz every 20 ms while DELETE /me ends a user's 5,000 sessions, on the large one;
// - ages the large database by a year (every instant moved back 365 days: nearly every session
//   and token expired, the audit events past AUDIT_RETENTION_DAYS), probes /healthz while a
//   freshly started server's first sweep deletes that backlog, and reads the database's rows and
//   size before and after the sweep, and its size after `portcullis prune --vacuum`.
// Writes bench/results/<date>-scale.json. Nothing else may run meanwhile; a million users take
// some minutes to seed on each store.
import { execFileSync } from "node:child_process"
import { mkdtempSync, rmSync, statSync, writeFileSync } from "node:fs"
import { cpus, tmpdir } from "node:os"
import { join } from "node:path"
import { Worker } from "node:worker_threads"
import { hash } from "@node-rs/argon2"
import Database from "better-sqlite3"
import pg from "pg"
import {
  contractRoutes,
  freePort,
  log,
  measure,
  medianRound,
  password,
  post,
  root,
  rounds,
  secret,
  sleep,
  startServer
} from "./harness.mjs"

const users = Number(process.env.SCALE_USERS ?? 1_000_000)
const smallUsers = 1_000
const DAY = 86_400_000
const YEAR = 365 * DAY
const cli = join(root, "dist/main/cli.js")

/** The user ids and addresses of the seeded users: UUID-shaped ids, as USER_ID_TYPE=uuid makes. */
const seededIdSql = {
  sqlite: (i) => `printf('%08x-0000-7000-8000-%012x', ${i}, ${i})`,
  pg: (i) => `lpad(to_hex(${i}), 8, '0') || '-0000-7000-8000-' || lpad(to_hex(${i}), 12, '0')`
}

/**
 * The statements that seed `count` users as a month of use leaves them: created over the last
 * year, each with one live session last used within the last 29 days, five
 * refresh tokens rotated a quarter of an hour apart, the newest live, and five audit events within
 * the last 89 days. Nothing is due for a sweep yet. `range(n)` is a relation of i = 0..n-1.
 */
const seedStatements = (dialect, count, hashed, range, now) => {
  const id = seededIdSql[dialect]
  const bool = (value) => (dialect === "pg" ? (value ? "TRUE" : "FALSE") : value ? "1" : "0")
  const usedAt = (i) => `(${now} - ${29 * DAY} + ((${i} * 7919) % ${count}) * ${Math.floor((28 * DAY) / count)})`
  return [
    `INSERT INTO users (id, email, hashed_password, is_active, is_verified, is_superuser, created_at)
      SELECT ${id("i")}, 'user' || i || '@scale.example', '${hashed}', ${bool(true)}, ${bool(true)}, ${bool(false)},
        ${now} - ${YEAR} + i * ${Math.floor(YEAR / count)} FROM ${range(count)}`,
    `INSERT INTO token_families (family_id, user_id, ip_address, user_agent, created_at, last_used_at, expires_at, revoked_at)
      SELECT 'family-' || i, ${id("i")}, '192.0.2.1', 'scale/1.0', ${usedAt("i")} - ${DAY}, ${usedAt("i")},
        ${usedAt("i")} + ${30 * DAY}, NULL FROM ${range(count)}`,
    `INSERT INTO refresh_tokens (digest, family_id, issued_at, expires_at, rotated_at, sealed_successor)
      SELECT 'token-' || i || '-' || k, 'family-' || i, ${usedAt("i")} - (4 - k) * 900000,
        ${usedAt("i")} - (4 - k) * 900000 + ${30 * DAY},
        CASE WHEN k < 4 THEN ${usedAt("i")} - (3 - k) * 900000 ELSE NULL END, NULL
      FROM ${range(count)}, (SELECT 0 AS k UNION ALL SELECT 1 UNION ALL SELECT 2 UNION ALL SELECT 3 UNION ALL SELECT 4) AS ks`,
    // As a log is written: ids ascending with time, the users of consecutive events scattered
    // (event j is user j * 104729 mod count's, a prime to the count: five events each).
    `INSERT INTO audit_events (occurred_at, event_type, user_id, actor_kind, actor_id, ip_address, user_agent, details)
      SELECT ${now} - ${89 * DAY} + i * ${Math.floor((88 * DAY) / (count * 5))},
        'sign_in.succeeded', ${id(`(i * 104729 % ${count})`)}, 'user', ${id(`(i * 104729 % ${count})`)},
        '192.0.2.1', 'scale/1.0', '{"method":"password"}'
      FROM ${range(count * 5)}`
  ]
}

/** Every instant of the seeded rows moved back a year: what a year without sweeps leaves. */
const ageStatements = [
  `UPDATE token_families SET created_at = created_at - ${YEAR}, last_used_at = last_used_at - ${YEAR},
    expires_at = expires_at - ${YEAR}, revoked_at = revoked_at - ${YEAR}`,
  `UPDATE refresh_tokens SET issued_at = issued_at - ${YEAR}, expires_at = expires_at - ${YEAR},
    rotated_at = rotated_at - ${YEAR}`,
  `UPDATE audit_events SET occurred_at = occurred_at - ${YEAR}`
]

/** A store: how to make a database, seed it, age it and read its size. */
const sqliteStore = (folder) => ({
  name: "sqlite",
  create: (label) => ({ url: `sqlite:${join(folder, `${label}.db`)}`, file: join(folder, `${label}.db`) }),
  run: async (database, statements) => {
    const db = new Database(database.file)
    db.pragma("journal_mode = WAL")
    db.pragma("foreign_keys = ON")
    for (const statement of statements) db.exec(statement)
    db.pragma("wal_checkpoint(TRUNCATE)")
    db.close()
  },
  range: (n) => `(WITH RECURSIVE r(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM r WHERE i < ${n - 1}) SELECT i FROM r)`,
  size: async (database) => statSync(database.file).size + walSize(database.file),
  // In a thread of its own: better-sqlite3 blocks its thread for the whole query, and a count of
  // millions of rows here would hold up the /healthz probes this process times meanwhile.
  count: (database, query) =>
    new Promise((resolve, reject) => {
      const counting = new Worker(
        `const { workerData, parentPort } = require("node:worker_threads")
        const Database = require("better-sqlite3")
        const db = new Database(workerData.file, { readonly: true })
        parentPort.postMessage(Number(Object.values(db.prepare(workerData.query).get())[0]))
        db.close()`,
        { eval: true, workerData: { file: database.file, query } }
      )
      counting.once("message", resolve)
      counting.once("error", reject)
    }),
  drop: async () => {}
})

const walSize = (file) => {
  try {
    return statSync(`${file}-wal`).size
  } catch {
    return 0
  }
}

const pgStore = (baseUrl) => ({
  name: "postgresql",
  create: (label) => {
    const schema = `scale_${label}_${process.pid}`
    const url = new URL(baseUrl)
    url.searchParams.set("options", `-c search_path=${schema}`)
    return { url: url.toString(), schema }
  },
  /** VACUUM (ANALYZE) of the swept tables, when the server's autovacuum is off. */
  standInForAutovacuum: async (database) => {
    const client = new pg.Client({ connectionString: baseUrl })
    await client.connect()
    try {
      const { rows } = await client.query("SHOW autovacuum")
      if (rows[0]?.autovacuum === "on") return
      for (const table of ["refresh_tokens", "token_families", "audit_events"]) {
        await client.query(`VACUUM (ANALYZE) ${database.schema}.${table}`)
      }
    } finally {
      await client.end()
    }
  },
  run: async (database, statements) => {
    const client = new pg.Client({ connectionString: baseUrl })
    await client.connect()
    try {
      await client.query(`CREATE SCHEMA IF NOT EXISTS ${database.schema}`)
      await client.query(`SET search_path = ${database.schema}`)
      for (const statement of statements) await client.query(statement)
      await client.query("ANALYZE")
    } finally {
      await client.end()
    }
  },
  range: (n) => `generate_series(0::bigint, ${n - 1}::bigint) AS r(i)`,
  size: async (database) => {
    const client = new pg.Client({ connectionString: baseUrl })
    await client.connect()
    try {
      const { rows } = await client.query(
        "SELECT COALESCE(SUM(pg_total_relation_size(c.oid)), 0)::bigint AS size FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = $1 AND c.relkind = 'r'",
        [database.schema]
      )
      return Number(rows[0].size)
    } finally {
      await client.end()
    }
  },
  count: async (database, query) => {
    const client = new pg.Client({ connectionString: baseUrl })
    await client.connect()
    try {
      await client.query(`SET search_path = ${database.schema}`)
      const { rows } = await client.query(query)
      return Number(Object.values(rows[0])[0])
    } finally {
      await client.end()
    }
  },
  drop: async (database) => {
    const client = new pg.Client({ connectionString: baseUrl })
    await client.connect()
    await client.query(`DROP SCHEMA IF EXISTS ${database.schema} CASCADE`)
    await client.end()
  }
})

const env = (database) => ({
  SERVICE_DATABASE_URL: database.url,
  SERVICE_SECRET_KEY: secret,
  SERVICE_AUTH_RATE_LIMIT_ENABLED: "false",
  SERVICE_MAX_LOGIN_ATTEMPTS: "100",
  SERVICE_LOG_LEVEL: "warn",
  // One sweep when the server starts, which finds nothing due in a seeded database (a year later,
  // the backlog), and none during the loads.
  SERVICE_PRUNE_INTERVAL_SECONDS: "86400"
})

/** `portcullis` run once, to its end, on `database`. */
const portcullis = (database, args) =>
  execFileSync(process.execPath, [cli, ...args], { env: { ...process.env, ...env(database) } }).toString()

const timed = async (what, work) => {
  const started = Date.now()
  const result = await work()
  const seconds = (Date.now() - started) / 1000
  log(`  ${what}: ${seconds.toFixed(1)} s`)
  return { result, seconds }
}

/** A migrated database of `count` seeded users. */
const seeded = async (store, label, count, hashed) => {
  const database = store.create(label)
  await store.drop(database)
  if (store.name === "postgresql") await store.run(database, [])
  portcullis(database, ["migrate"])
  const { seconds } = await timed(`${store.name}: seeded ${count} users`, () =>
    store.run(
      database,
      seedStatements(store.name === "sqlite" ? "sqlite" : "pg", count, hashed, store.range, Date.now())
    )
  )
  return { ...database, seedSeconds: seconds }
}

const serve = async (name, database) => {
  const port = freePort()
  const server = await startServer(
    name,
    [cli, "serve"],
    { ...env(database), SERVICE_PORT: String(port) },
    `http://127.0.0.1:${port}/healthz`
  )
  return { server, base: `http://127.0.0.1:${port}`, auth: `http://127.0.0.1:${port}/api/v1/auth` }
}

/** /healthz every 20 ms while `work` runs: each probe's time, in milliseconds. */
const probing = async (base, work) => {
  const probes = []
  let failed = 0
  let running = true
  const loop = (async () => {
    while (running) {
      const started = performance.now()
      try {
        await (await fetch(`${base}/healthz`)).arrayBuffer()
      } catch {
        // A kept-alive connection the server closed as the probe reused it: counted, and its
        // time kept, since a loop held past the keep-alive timeout is what closes them.
        failed++
      }
      probes.push(performance.now() - started)
      await sleep(20)
    }
  })()
  await sleep(100)
  const result = await work()
  running = false
  await loop
  const sorted = [...probes].sort((a, b) => a - b)
  return {
    result,
    probes: probes.length,
    probes_failed: failed,
    probe_max_ms: Math.round(sorted.at(-1) ?? 0),
    probe_p99_ms: Math.round(sorted[Math.floor(sorted.length * 0.99)] ?? 0)
  }
}

/**
 * GET /sessions of a user with 5,000 ended sessions and one live against a user with one, on the
 * large database, in alternated rounds: the list reads the live ones through their own index.
 */
const sessionsOfManyEnded = async (store, database, running) => {
  const signedIn = async (email) => {
    await post(`${running.auth}/register`, { email, password })
    const login = await post(`${running.auth}/login`, { email, password })
    return login.body
  }
  const one = await signedIn("one-session@scale.example")
  const many = await signedIn("ended-sessions@scale.example")
  const now = Date.now()
  await store.run(database, [
    `INSERT INTO token_families (family_id, user_id, ip_address, user_agent, created_at, last_used_at, expires_at, revoked_at)
      SELECT 'ended-' || i, '${String(many.user.id)}', '192.0.2.1', 'scale/1.0', ${now} - i, ${now} - i, ${now} + ${30 * DAY}, ${now}
      FROM ${store.range(5_000)}`
  ])
  const route = (token) => ({
    url: `${running.auth}/sessions`,
    script: "fixed.lua",
    connections: 50,
    env: { BENCH_PATH: new URL(`${running.auth}/sessions`).pathname, BENCH_HEADERS: `Authorization: Bearer ${token}` }
  })
  const taken = { one: [], many: [] }
  for (let round = 0; round < rounds; round++) {
    for (const who of round % 2 === 0 ? ["one", "many"] : ["many", "one"]) {
      taken[who].push(await measure(running.server, route(who === "one" ? one.access_token : many.access_token)))
    }
  }
  const small = medianRound(taken.one)
  const large = medianRound(taken.many)
  return {
    one_session: small,
    ended_5000_and_one_live: large,
    ratio: ratioOf(large.requests_per_second, small.requests_per_second),
    p50_ratio: ratioOf(large.p50_ms, small.p50_ms)
  }
}

/** A user of the large database with 5,000 sessions, deleted by DELETE /me while /healthz is probed. */
const bulkDelete = async (store, database, running) => {
  const email = "many-sessions@scale.example"
  await post(`${running.auth}/register`, { email, password })
  const login = await post(`${running.auth}/login`, { email, password })
  const userId = String(login.body.user.id)
  const now = Date.now()
  await store.run(database, [
    `INSERT INTO token_families (family_id, user_id, ip_address, user_agent, created_at, last_used_at, expires_at, revoked_at)
      SELECT 'many-' || i, '${userId}', '192.0.2.1', 'scale/1.0', ${now} - i, ${now} - i, ${now} + ${30 * DAY}, NULL
      FROM ${store.range(5_000)}`,
    `INSERT INTO refresh_tokens (digest, family_id, issued_at, expires_at, rotated_at, sealed_successor)
      SELECT 'many-token-' || i, 'many-' || i, ${now} - i, ${now} + ${30 * DAY}, NULL, NULL FROM ${store.range(5_000)}`
  ])
  const { result, ...probed } = await probing(running.base, async () => {
    const started = performance.now()
    const reply = await fetch(`${running.auth}/me`, {
      method: "DELETE",
      headers: { authorization: `Bearer ${login.body.access_token}` }
    })
    return { status: reply.status, ms: Math.round(performance.now() - started) }
  })
  if (result.status !== 204) throw new Error(`DELETE /me answered ${result.status}`)
  return { delete_ms: result.ms, ...probed }
}

/**
 * The rows of each kind, and how many of them a sweep must keep: refresh tokens not yet expired
 * (with a session that has not ended), sessions live or ended within the last hour, audit
 * events within AUDIT_RETENTION_DAYS (90).
 */
const rowsOf = async (store, database) => {
  const now = Date.now()
  const count = (query) => store.count(database, query)
  return {
    refresh_tokens: await count("SELECT COUNT(*) FROM refresh_tokens"),
    refresh_tokens_needed: await count(
      `SELECT COUNT(*) FROM refresh_tokens t JOIN token_families f ON f.family_id = t.family_id
        WHERE t.expires_at > ${now} AND (f.revoked_at IS NULL OR f.revoked_at > ${now - 3_600_000})`
    ),
    sessions: await count("SELECT COUNT(*) FROM token_families"),
    sessions_needed: await count(
      `SELECT COUNT(*) FROM token_families
        WHERE expires_at > ${now - 3_600_000} AND (revoked_at IS NULL OR revoked_at > ${now - 3_600_000})`
    ),
    audit_events: await count("SELECT COUNT(*) FROM audit_events"),
    audit_events_needed: await count(`SELECT COUNT(*) FROM audit_events WHERE occurred_at > ${now - 90 * DAY}`)
  }
}

/** The rows a sweep is due to delete now (the rules of docs/operating.md, "Data over time", at their defaults). */
const dueOf = async (store, database) => {
  const now = Date.now()
  const ended = now - 15 * 60_000 - 30_000
  const counts = await Promise.all([
    store.count(database, `SELECT COUNT(*) FROM refresh_tokens WHERE expires_at < ${now}`),
    store.count(database, `SELECT COUNT(*) FROM token_families WHERE expires_at < ${ended} OR revoked_at < ${ended}`),
    store.count(database, `SELECT COUNT(*) FROM audit_events WHERE occurred_at < ${now - 90 * DAY}`)
  ])
  return counts.reduce((sum, count) => sum + count, 0)
}

/** The large database a year on: its first sweep under /healthz probes, then its size, pruned and vacuumed. */
const aYearLater = async (store, database) => {
  await timed(`${store.name}: aged a year`, () => store.run(database, ageStatements))
  const before = await store.size(database)
  const rowsBefore = await rowsOf(store, database)
  const running = await serve(`${store.name} a year later`, database)
  // The sweep starts once the server listens; it is over when nothing due is left. Read on a
  // connection of the bench's own, not by `portcullis prune --dry-run`: a command's start-up
  // takes the write lock (its migrations), and its wait would be measured with the sweep.
  const swept = await probing(running.base, async () => {
    const started = Date.now()
    let vacuumed = Date.now()
    for (;;) {
      await sleep(5_000)
      if ((await dueOf(store, database)) === 0) return (Date.now() - started) / 1000
      // A PostgreSQL with autovacuum off (as on these machines) never clears the dead rows a
      // sweep leaves, and every plan reads past them: the bench vacuums each minute instead, as
      // autovacuum would on a production server.
      if (store.standInForAutovacuum !== undefined && Date.now() - vacuumed > 60_000) {
        await store.standInForAutovacuum(database)
        vacuumed = Date.now()
      }
    }
  })
  // The sweep gives SQLite's free pages back a step at a time after its last batch: the server
  // runs on until the file stops shrinking (at most ten minutes), so the size read is the sweep's.
  const settled = await timed(`${store.name}: free pages given back`, async () => {
    let last = await store.size(database)
    for (let waited = 0; waited < 600_000; waited += 5_000) {
      await sleep(5_000)
      const now = await store.size(database)
      if (now === last) return
      last = now
    }
  })
  await running.server.stop()
  const afterSweep = await store.size(database)
  const rowsAfter = await rowsOf(store, database)
  const { seconds: vacuumSeconds } = await timed(`${store.name}: prune --vacuum`, async () =>
    portcullis(database, ["prune", "--vacuum"])
  )
  return {
    rows_before: rowsBefore,
    rows_after_sweep: rowsAfter,
    size_before_bytes: before,
    sweep_seconds: swept.result,
    sweep_probe_max_ms: swept.probe_max_ms,
    sweep_probe_p99_ms: swept.probe_p99_ms,
    space_settled_seconds: settled.seconds,
    size_after_sweep_bytes: afterSweep,
    vacuum_seconds: vacuumSeconds,
    size_after_vacuum_bytes: await store.size(database)
  }
}

const ratioOf = (large, small) => Math.round((large / small) * 100) / 100

const main = async () => {
  execFileSync(process.execPath, [join(root, "scripts/build.mjs")], { stdio: "inherit" })
  const hashed = await hash(password, { memoryCost: 19_456, timeCost: 2, parallelism: 1 })
  const folder = mkdtempSync(join(tmpdir(), "portcullis-scale-"))
  // SCALE_STORES=sqlite or =postgresql runs one of them only.
  const only = process.env.SCALE_STORES?.split(",")
  const stores = [
    sqliteStore(folder),
    ...(process.env.TEST_DATABASE_URL ? [pgStore(process.env.TEST_DATABASE_URL)] : [])
  ].filter((store) => only === undefined || only.includes(store.name))
  const yearOnly = process.env.SCALE_PHASES === "year"
  // A run of some stores or phases only is written beside a whole one, not over it.
  const part = [...(only ?? []), ...(yearOnly ? ["year"] : [])].join("-")
  const file = join(
    root,
    "bench/results",
    `${new Date().toISOString().slice(0, 10)}-scale${part === "" ? "" : `-${part}`}.json`
  )
  const report = { date: new Date().toISOString(), cpus: cpus().length, users, stores: [] }
  try {
    for (const store of stores) {
      log(`${store.name}: seeding`)
      if (yearOnly) {
        // SCALE_PHASES=year: the large database a year on, nothing else.
        const large = await seeded(store, "large", users, hashed)
        const year = await aYearLater(store, large)
        report.stores.push({ store: store.name, seed_seconds: large.seedSeconds, a_year_later: year })
        await store.drop(large)
        writeFileSync(file, `${JSON.stringify(report, null, 2)}\n`)
        log(`written ${file}`)
        continue
      }
      const small = await seeded(store, "small", smallUsers, hashed)
      const large = await seeded(store, "large", users, hashed)
      const servers = {
        small: await serve(`${store.name} small`, small),
        large: await serve(`${store.name} large`, large)
      }
      // Let each server's first sweep (which finds nothing due) pass before the loads.
      await sleep(3_000)
      const routes = {
        small: await contractRoutes(`${store.name}-small`, servers.small.auth),
        large: await contractRoutes(`${store.name}-large`, servers.large.auth)
      }
      const figures = {}
      for (const route of ["login", "me", "refresh"]) {
        const taken = { small: [], large: [] }
        for (let round = 0; round < rounds; round++) {
          const order = round % 2 === 0 ? ["small", "large"] : ["large", "small"]
          for (const size of order) {
            const figure = await measure(servers[size].server, routes[size][route])
            taken[size].push(figure)
            log(`  round ${round + 1} of ${rounds}: ${store.name} ${size} ${route} ${figure.requests_per_second} req/s`)
          }
        }
        const small = medianRound(taken.small)
        const large = medianRound(taken.large)
        figures[route] = {
          small,
          large,
          ratio: ratioOf(large.requests_per_second, small.requests_per_second),
          p50_ratio: ratioOf(large.p50_ms, small.p50_ms)
        }
        log(
          `${store.name} ${route}: large / small ${figures[route].ratio} (${large.requests_per_second} / ${small.requests_per_second} req/s), p50 ${figures[route].p50_ratio}`
        )
      }
      const sessionsList = await sessionsOfManyEnded(store, large, servers.large)
      log(
        `${store.name} GET /sessions, 5,000 ended and one live / one: p50 ${sessionsList.p50_ratio}, req/s ${sessionsList.ratio}`
      )
      const bulk = await bulkDelete(store, large, servers.large)
      log(`${store.name}: DELETE /me of 5,000 sessions ${bulk.delete_ms} ms; /healthz max ${bulk.probe_max_ms} ms`)
      await servers.small.server.stop()
      await servers.large.server.stop()
      const year = await aYearLater(store, large)
      log(
        `${store.name}: a year later ${year.size_before_bytes} bytes; the first sweep took ${year.sweep_seconds} s (/healthz max ${year.sweep_probe_max_ms} ms) and left ${year.size_after_sweep_bytes}; vacuumed ${year.size_after_vacuum_bytes}`
      )
      report.stores.push({
        store: store.name,
        seed_seconds: large.seedSeconds,
        routes: figures,
        sessions_list: sessionsList,
        bulk_delete: bulk,
        a_year_later: year
      })
      await store.drop(small)
      await store.drop(large)
      // Each store's figures as soon as they are taken: a later store's failure keeps them.
      writeFileSync(file, `${JSON.stringify(report, null, 2)}\n`)
      log(`written ${file}`)
    }
  } finally {
    rmSync(folder, { recursive: true, force: true })
  }
}

await main()
