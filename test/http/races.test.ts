import { createHash, randomUUID } from "node:crypto"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import * as SqlClient from "@effect/sql/SqlClient"
import * as SqliteClient from "@effect/sql-sqlite-node/SqliteClient"
import { describe, expect, layer } from "@effect/vitest"
import { Effect, Fiber, Layer, Redacted, Schedule } from "effect"
import { Accounts } from "../../application/Accounts.js"
import * as Logging from "../../composition/logging.js"
import { Email } from "../../domain/User.js"
import * as AttemptCounterRedis from "../../infrastructure/redis/AttemptCounterRedis.js"
import * as PgDatabase from "../../infrastructure/sql/PgDatabase.js"
import {
  call,
  expectProblem,
  login,
  me,
  password,
  refresh,
  register,
  type Session,
  signIn,
  uniqueEmail
} from "../support/flows.js"
import * as Postgres from "../support/postgres.js"
import * as Redis from "../support/redis.js"
import * as TestApp from "../support/TestApp.js"

/**
 * Races on the real stores, through the HTTP API, with the store itself read afterwards on a
 * connection of the test's own. test/http/refresh-races.test.ts proves the status codes of
 * 10 racing refreshes on every backend; this file races more requests, checks what the store
 * holds afterwards, and races the other writes a client can repeat or an attacker can flood.
 */

/** Registrations answer 201 or 409 here, so that a race's winner and losers can be told apart. */
const openRegistration = { SERVICE_PREVENT_REGISTRATION_ENUMERATION: "false" }

/** The service on `databaseUrl` with the harness's defaults under `env`, logs off. */
const quietService = (databaseUrl: string, env: Record<string, string>) => {
  const settings = TestApp.settingsFor({
    SERVICE_SECRET_KEY: TestApp.testSecretKey,
    SERVICE_DATABASE_URL: databaseUrl,
    SERVICE_LOG_LEVEL: "none",
    SERVICE_AUTH_RATE_LIMIT_ENABLED: "false",
    ...openRegistration,
    ...env
  })
  return TestApp.serve(settings).pipe(Layer.provide(Logging.layer(settings.logging)))
}

/**
 * A database the service runs on, and a SqlClient of the test's own on the same data (opened
 * after the service has migrated it), to count rows after a race.
 */
interface Store {
  readonly name: string
  readonly skip: boolean
  /** Whether the refresh and logout races run here too: they do not depend on the id type. */
  readonly refreshes: boolean
  /** Whether the test's connection can hold a row lock while the service goes on (not SQLite's one writer). */
  readonly rowLocks: boolean
  readonly app: (env: Record<string, string>) => Layer.Layer<TestApp.TestApp | SqlClient.SqlClient | Accounts, unknown>
}

/** A SQLite file in a folder of its own (an in-memory database is not reachable from a second connection). */
const sqlite = (env: Record<string, string>) =>
  Layer.unwrapScoped(
    Effect.gen(function* () {
      const folder = yield* Effect.acquireRelease(
        Effect.sync(() => mkdtempSync(join(tmpdir(), "portcullis-races-"))),
        (folder) => Effect.sync(() => rmSync(folder, { recursive: true, force: true }))
      )
      const filename = join(folder, "portcullis.db")
      const reader = SqliteClient.layer({ filename, readonly: true, disableWAL: true })
      return reader.pipe(Layer.provideMerge(quietService(`sqlite:${filename}`, env)))
    })
  )

/** PostgreSQL in a schema of its own, dropped afterwards. */
const postgres = (env: Record<string, string>) =>
  Layer.unwrapScoped(
    Effect.map(Postgres.freshSchemaUrl, ({ url }) =>
      PgDatabase.client(Redacted.make(url), { maxConnections: 2 }).pipe(Layer.provideMerge(quietService(url, env)))
    )
  )

const integerIds = { SERVICE_USER_ID_TYPE: "integer" }

const stores: ReadonlyArray<Store> = [
  { name: "sqlite", skip: false, refreshes: true, rowLocks: false, app: sqlite },
  {
    name: "sqlite, integer ids",
    skip: false,
    refreshes: false,
    rowLocks: false,
    app: (env) => sqlite({ ...integerIds, ...env })
  },
  { name: "postgresql", skip: Postgres.noPostgres, refreshes: true, rowLocks: true, app: postgres },
  {
    name: "postgresql, integer ids",
    skip: Postgres.noPostgres,
    refreshes: false,
    rowLocks: false,
    app: (env) => postgres({ ...integerIds, ...env })
  }
]

interface Pair {
  readonly access_token: string
  readonly refresh_token: string
}

const inParallel = <A, E, R>(effects: ReadonlyArray<Effect.Effect<A, E, R>>) =>
  Effect.all(effects, { concurrency: "unbounded" })

const times = <A>(count: number, make: (index: number) => A) => Array.from({ length: count }, (_, index) => make(index))

const count = (statuses: ReadonlyArray<number>, status: number) => statuses.filter((one) => one === status).length

/** What a token says, read without verifying it: only to find its family in the store. */
const familyOf = (token: string): string =>
  (JSON.parse(Buffer.from(token.split(".")[1] ?? "", "base64url").toString("utf8")) as { family_id: string }).family_id

/** How the store keeps a refresh token: its SHA-256 digest in hex. */
const digest = (token: string) => createHash("sha256").update(token).digest("hex")

const query = <A extends object>(statement: (sql: SqlClient.SqlClient) => Effect.Effect<ReadonlyArray<A>, unknown>) =>
  Effect.flatMap(SqlClient.SqlClient, statement).pipe(Effect.orDie)

/** The refresh tokens the store holds for a family: whether each has been rotated. */
const tokensOf = (familyId: string) =>
  query(
    (sql) => sql<{ digest: string; rotated_at: unknown }>`SELECT digest, rotated_at FROM refresh_tokens
    WHERE family_id = ${familyId}`
  ).pipe(Effect.map((rows) => rows.map((row) => ({ digest: row.digest, rotated: row.rotated_at !== null }))))

const familyEnded = (familyId: string) =>
  query(
    (sql) => sql<{ revoked_at: unknown }>`SELECT revoked_at FROM token_families WHERE family_id = ${familyId}`
  ).pipe(
    Effect.map((rows) => {
      expect(rows).toHaveLength(1)
      return rows[0]?.revoked_at !== null
    })
  )

/** COUNT(*) of a statement's rows, as a number on both dialects (PostgreSQL answers a bigint string). */
const countOf = (statement: (sql: SqlClient.SqlClient) => Effect.Effect<ReadonlyArray<{ n: unknown }>, unknown>) =>
  query(statement).pipe(Effect.map((rows) => Number(rows[0]?.n)))

/** Registers a new address; registration is open here, so it answers 201. */
const signUpEmail = (label?: string) =>
  Effect.gen(function* () {
    const email = uniqueEmail(label)
    expect((yield* register(email)).status).toBe(201)
    return email
  })

const signUp = (label?: string) => Effect.flatMap(signUpEmail(label), (email) => signIn(email))

const signUpSuperuser = Effect.gen(function* () {
  const email = uniqueEmail("root")
  yield* (yield* Accounts).createSuperuser(Email.make(email), Redacted.make(password))
  return yield* signIn(email)
})

/**
 * Rounds of the refresh and lockout bursts: one burst may miss an interleaving that several will
 * not (with the compare-and-swap removed, a single burst of 50 refreshes still found one winner
 * now and then; with the lockout script split in two, a burst of 30 logins still came out exact).
 */
const ROUNDS = 4

/** Under the strict rule (REFRESH_REUSE_GRACE_SECONDS=0). */
const strictRefreshRace = Effect.gen(function* () {
  const email = yield* signUpEmail("racer")
  for (let round = 0; round < ROUNDS; round++) {
    const session = yield* signIn(email)
    const familyId = familyOf(session.refresh)
    const replies = yield* inParallel(times(50, () => refresh(session.refresh)))
    const statuses = replies.map((reply) => reply.status)
    expect(count(statuses, 200)).toBe(1)
    expect(count(statuses, 401)).toBe(49)
    for (const reply of replies) if (reply.status !== 200) expectProblem(reply, 401, "TokenBlacklistedError")
    const winner = replies.find((reply) => reply.status === 200)?.body as Pair

    // One rotation took place: the presented token is rotated, one successor was ever stored,
    // and it is the pair the winner received.
    const stored = yield* tokensOf(familyId)
    expect(stored).toHaveLength(2)
    expect(stored.filter((token) => !token.rotated)).toEqual([{ digest: digest(winner.refresh_token), rotated: false }])
    expect(stored.find((token) => token.rotated)?.digest).toBe(digest(session.refresh))

    // The losers presented a rotated token: under the strict rule that is reuse, so the session
    // ended, the winner's pair with it (docs/behaviour.md, "Sessions and rotation": the grace window is what spares racing clients).
    expect(yield* familyEnded(familyId)).toBe(true)
    expectProblem(yield* refresh(winner.refresh_token), 401, "TokenBlacklistedError")
    expectProblem(yield* me(winner.access_token), 401, "TokenBlacklistedError")
    expect(yield* tokensOf(familyId)).toHaveLength(2)
  }
})

/** With a reuse grace window (REFRESH_REUSE_GRACE_SECONDS=10). */
const graceRefreshRace = Effect.gen(function* () {
  const email = yield* signUpEmail("racer")
  for (let round = 0; round < ROUNDS; round++) {
    const session = yield* signIn(email)
    const familyId = familyOf(session.refresh)
    const replies = yield* inParallel(times(50, () => refresh(session.refresh)))
    expect(replies.map((reply) => reply.status)).toEqual(times(50, () => 200))
    const successor = replies[0]?.body as Pair
    for (const reply of replies) expect(reply.body).toEqual(successor)

    const stored = yield* tokensOf(familyId)
    expect(stored).toHaveLength(2)
    expect(stored.filter((token) => !token.rotated)).toEqual([
      { digest: digest(successor.refresh_token), rotated: false }
    ])
    expect(yield* familyEnded(familyId)).toBe(false)

    // The one successor is live, and rotates on as a token of its own.
    expect((yield* me(successor.access_token)).status).toBe(200)
    const next = yield* refresh(successor.refresh_token)
    expect(next.status).toBe(200)
    const rotatedOn = yield* tokensOf(familyId)
    expect(rotatedOn).toHaveLength(3)
    expect(rotatedOn.filter((token) => !token.rotated)).toEqual([
      { digest: digest((next.body as Pair).refresh_token), rotated: false }
    ])
  }
})

/**
 * One address registered 20 times at once, in spellings that normalise to one, each with its own
 * password: the store's unique email decides, and the row it keeps is the winner's.
 */
const registrationRace = Effect.gen(function* () {
  const email = uniqueEmail("twin")
  // Spellings of one address: the store's uniqueness must hold on the normalised form.
  const spellings = [email, email.toUpperCase(), `  ${email} `, email.replace(/^./, (c) => c.toUpperCase())]
  const secrets = times(20, (index) => `${password} #${index}`)
  const replies = yield* inParallel(
    times(20, (index) => register(spellings[index % spellings.length] ?? email, secrets[index]))
  )
  const statuses = replies.map((reply) => reply.status)
  expect(count(statuses, 201)).toBe(1)
  expect(count(statuses, 409)).toBe(19)
  for (const reply of replies) if (reply.status !== 201) expectProblem(reply, 409, "UserAlreadyExistsError")
  const winnerIndex = statuses.indexOf(201)
  const created = replies[winnerIndex]?.body as { id: string | number; email: string }
  expect(created.email).toBe(email)

  const rows = yield* query((sql) => sql<{ id: unknown }>`SELECT id FROM users WHERE lower(email) = ${email}`)
  expect(rows.map((row) => String(row.id))).toEqual([String(created.id)])
  // The row is the winner's own: no loser's write replaced its password.
  expect((yield* login(email, secrets[winnerIndex])).status).toBe(200)
  expectProblem(yield* login(email, secrets[(winnerIndex + 1) % 20]), 401, "AuthenticationError")

  // With integer ids the refused registrations took no number.
  const next = (yield* register(uniqueEmail("next"))).body as { id: string | number }
  if (typeof created.id === "number") expect(next.id).toBe(created.id + 1)
})

/** One new role granted to one user 20 times at once: the role is created once, held once. */
const roleGrantRace = Effect.gen(function* () {
  const admin = yield* signUpSuperuser
  const target = yield* signUp("target")
  const role = `racer-${randomUUID().slice(0, 8)}`
  const replies = yield* inParallel(
    times(20, () => call("POST", "/admin/assign-role", { token: admin.access, json: { user_id: target.id, role } }))
  )
  expect(replies.map((reply) => reply.status)).toEqual(times(20, () => 200))
  expect(yield* countOf((sql) => sql`SELECT COUNT(*) AS n FROM user_roles WHERE role = ${role}`)).toBe(1)
  expect(yield* countOf((sql) => sql`SELECT COUNT(*) AS n FROM roles WHERE name = ${role}`)).toBe(1)
  expect(((yield* me(target.access)).body as { roles: Array<string> }).roles).toEqual([role])
})

/** One permission granted to one new role 20 times at once. */
const permissionGrantRace = Effect.gen(function* () {
  const admin = yield* signUpSuperuser
  const role = `racer-${randomUUID().slice(0, 8)}`
  const permission = "posts:publish"
  const replies = yield* inParallel(
    times(20, () => call("POST", "/admin/assign-permission", { token: admin.access, json: { role, permission } }))
  )
  expect(replies.map((reply) => reply.status)).toEqual(times(20, () => 200))
  expect(
    yield* countOf(
      (sql) => sql`SELECT COUNT(*) AS n FROM role_permissions WHERE role = ${role} AND permission = ${permission}`
    )
  ).toBe(1)
  expect(yield* countOf((sql) => sql`SELECT COUNT(*) AS n FROM roles WHERE name = ${role}`)).toBe(1)
  const listed = yield* call("GET", `/admin/roles/${role}/permissions`, { token: admin.access })
  expect(listed.body).toEqual({ role, permissions: [permission] })
})

const logout = (session: Session) => call("POST", "/logout", { token: session.access })

/** `effect` started `ms` milliseconds late (none when `ms` is not positive). */
const after = <A, E, R>(ms: number, effect: Effect.Effect<A, E, R>) =>
  ms > 0 ? Effect.zipRight(Effect.sleep(`${ms} millis`), effect) : effect

/**
 * How much later the logout starts than the refreshes (negative: the refreshes start later), in
 * the rounds that overlap them; "logout first" and "refreshes first" rounds run one after the
 * other, so that each outcome is seen however busy the machine is.
 */
const OFFSETS = ["logout first", -40, -10, -3, -1, 0, 0, 0, 0, 1, 3, 10, 40, "refreshes first"] as const

/**
 * Sign-out racing refreshes of the same session, round after round. Whatever the order, once
 * both are done the session is over: the family is ended in the store, its every refresh token
 * refused, and the access token of a successor that a refresh won before the logout refused too.
 */
const logoutRacingRefreshes = (refreshesPerRound: number) =>
  Effect.gen(function* () {
    const email = yield* signUpEmail("racer")
    let roundsWithSuccessor = 0
    let roundsWithout = 0
    for (const offset of OFFSETS) {
      const session = yield* signIn(email)
      const familyId = familyOf(session.refresh)
      const refreshes = times(refreshesPerRound, () =>
        after(typeof offset === "number" ? -offset : 0, refresh(session.refresh))
      )
      const [signOut, ...replies] =
        offset === "logout first"
          ? [yield* logout(session), ...(yield* inParallel(refreshes))]
          : offset === "refreshes first"
            ? [...(yield* inParallel(refreshes)), yield* logout(session)].reverse()
            : yield* inParallel([after(offset, logout(session)), ...refreshes])
      expect(signOut?.status).toBe(204)
      for (const reply of replies) if (reply.status !== 200) expectProblem(reply, 401, "TokenBlacklistedError")
      const successors = replies.filter((reply) => reply.status === 200).map((reply) => reply.body as Pair)
      const successor = successors[0]
      if (successor === undefined) roundsWithout++
      else roundsWithSuccessor++
      for (const other of successors) expect(other).toEqual(successor)

      expect(yield* familyEnded(familyId)).toBe(true)
      const stored = yield* tokensOf(familyId)
      expect(stored).toHaveLength(successor === undefined ? 1 : 2)
      for (const refreshToken of [session.refresh, ...(successor === undefined ? [] : [successor.refresh_token])]) {
        expectProblem(yield* refresh(refreshToken), 401, "TokenBlacklistedError")
      }
      for (const accessToken of [session.access, ...(successor === undefined ? [] : [successor.access_token])]) {
        expectProblem(yield* me(accessToken), 401, "TokenBlacklistedError")
      }
    }
    // Both orders happened, so the assertions above were made on each.
    expect(roundsWithSuccessor).toBeGreaterThan(0)
    expect(roundsWithout).toBeGreaterThan(0)
  })

/**
 * The interleaving a burst only hits by luck, forced: a refresh has read its token as live and
 * is held (by a row lock of the test's) just before its compare-and-swap while the session logs
 * out. Released, the refresh must lose: the rotation re-checks the family and rolls back.
 */
const refreshHeldAcrossLogout = Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  const session = yield* signIn(yield* signUpEmail("held"))
  const familyId = familyOf(session.refresh)
  const reply = yield* Effect.scoped(
    Effect.gen(function* () {
      const holder = yield* sql.reserve
      yield* holder.executeUnprepared("BEGIN", [], undefined)
      yield* holder.execute(
        "SELECT digest FROM refresh_tokens WHERE digest = $1 FOR UPDATE",
        [digest(session.refresh)],
        undefined
      )
      const [{ pid }] = (yield* holder.execute("SELECT pg_backend_pid() AS pid", [], undefined)) as [{ pid: number }]
      const pending = yield* Effect.fork(refresh(session.refresh))
      yield* countOf(
        (sql) => sql`SELECT COUNT(*) AS n FROM pg_stat_activity WHERE ${pid} = ANY(pg_blocking_pids(pid))`
      ).pipe(
        Effect.repeat({ schedule: Schedule.spaced("10 millis"), until: (blocked) => blocked > 0 }),
        Effect.timeout("5 seconds"),
        Effect.orDie
      )
      expect((yield* logout(session)).status).toBe(204)
      yield* holder.executeUnprepared("COMMIT", [], undefined)
      return yield* Fiber.join(pending)
    })
  ).pipe(Effect.orDie)
  expectProblem(reply, 401, "TokenBlacklistedError")
  expect(yield* familyEnded(familyId)).toBe(true)
  expect(yield* tokensOf(familyId)).toEqual([{ digest: digest(session.refresh), rotated: false }])
})

for (const store of stores) {
  describe.skipIf(store.skip)(`races (${store.name})`, () => {
    layer(store.app({ SERVICE_REFRESH_REUSE_GRACE_SECONDS: "0" }), { excludeTestServices: true })((it) => {
      if (store.refreshes)
        it.effect(
          "strict rule, 50 parallel refreshes of one token, 4 rounds: one 200, one successor stored, then reuse",
          () => strictRefreshRace
        )

      it.effect(
        "20 parallel registrations of one address: one 201, nineteen 409, one row, the winner's password",
        () => registrationRace
      )

      it.effect(
        "20 parallel grants of one new role to one user: every one 200, one row, listed once",
        () => roleGrantRace
      )

      it.effect(
        "20 parallel grants of one permission to one new role: every one 200, one row, listed once",
        () => permissionGrantRace
      )

      if (store.rowLocks)
        it.effect(
          "a refresh held between its read and its write while the session logs out: refused, nothing stored",
          () => refreshHeldAcrossLogout
        )

      if (store.refreshes)
        it.effect("logout racing a refresh, 14 rounds: no live session survives the logout", () =>
          logoutRacingRefreshes(1)
        )
    })
  })

  if (!store.refreshes) continue
  describe.skipIf(store.skip)(`races with a refresh reuse grace window (${store.name})`, () => {
    layer(store.app({ SERVICE_REFRESH_REUSE_GRACE_SECONDS: "10" }), { excludeTestServices: true })((it) => {
      it.effect(
        "50 parallel refreshes of one token, 4 rounds: all get the one successor, the only one stored",
        () => graceRefreshRace
      )

      it.effect("logout racing 4 refreshes, 14 rounds: no live session survives the logout", () =>
        logoutRacingRefreshes(4)
      )
    })
  })
}

const wrong = "not the password at all"

/**
 * A burst of wrong passwords for one account, in spellings of its identifier that count as one.
 * Every attempt is counted before its password is verified (docs/behaviour.md, "Lockout": the failure
 * that reaches the maximum still answers 401, the next ones 423), so exactly ten are verified.
 * Run once per account of a test: a non-atomic counter can still come out exact on one burst.
 */
const lockoutBurst = (email: string) =>
  Effect.gen(function* () {
    yield* register(email)
    const spellings = [email, email.toUpperCase(), `  ${email}`]
    const replies = yield* inParallel(times(30, (index) => login(spellings[index % 3] ?? email, wrong)))
    const statuses = replies.map((reply) => reply.status)
    expect(count(statuses, 401)).toBe(10)
    expect(count(statuses, 423)).toBe(20)
    for (const reply of replies) {
      if (reply.status === 401) expectProblem(reply, 401, "AuthenticationError")
      else {
        expectProblem(reply, 423, "AccountLockedError")
        expect(Number(reply.headers.get("retry-after"))).toBeGreaterThan(0)
      }
    }
    const right = yield* login(email)
    expectProblem(right, 423, "AccountLockedError")
    expect(right.text).not.toContain("access_token")
  })

/** The attempt store under test: the memory adapter the settings choose, or Redis in its stead. */
const lockoutStores = [
  { name: "memory", skip: false, app: TestApp.layer("memory:", { SERVICE_MAX_LOGIN_ATTEMPTS: "10" }) },
  {
    name: "redis",
    skip: Redis.testRedisUrl === undefined,
    app: TestApp.layer(
      "memory:",
      { SERVICE_MAX_LOGIN_ATTEMPTS: "10" },
      { overrides: AttemptCounterRedis.layer.pipe(Layer.provide(Redis.clientLayer())) }
    )
  }
]

for (const store of lockoutStores) {
  describe.skipIf(store.skip)(`lockout under a burst (${store.name} attempt store)`, () => {
    layer(store.app, { excludeTestServices: true })((it) => {
      it.effect("30 parallel wrong logins, MAX_LOGIN_ATTEMPTS=10, 4 accounts: ten 401, twenty 423, then locked", () =>
        Effect.forEach(
          times(ROUNDS, () => uniqueEmail("burst")),
          lockoutBurst,
          { discard: true }
        )
      )
    })
  })
}
