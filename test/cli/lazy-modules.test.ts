import { generateKeyPairSync } from "node:crypto"
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, afterEach, beforeAll, describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { runCli } from "../support/cliRun.js"
import { freshSchemaUrl, noPostgres } from "../support/postgres.js"
import { killAll, moduleWatcher, startServer } from "../support/processes.js"
import { testRedisUrl } from "../support/redis.js"

/**
 * The optional pieces, by what needs them: each may be loaded only when the settings ask for it
 * (a start-up second or more otherwise, on every command).
 */
const optional = {
  opentelemetry: ["@opentelemetry", "@effect/opentelemetry"],
  passkeys: ["@simplewebauthn", "@peculiar"],
  postgres: ["pg", "@effect/sql-pg"],
  redis: ["ioredis"],
  smtp: ["nodemailer"],
  oauth: ["oauth4webapi"],
  asymmetricJwt: ["jose"],
  // What @effect/platform-node's index brings besides the modules used.
  cluster: ["@effect/cluster", "@effect/rpc"]
} as const
type Piece = keyof typeof optional

let scratch = ""
let runs = 0
beforeAll(() => {
  scratch = mkdtempSync(join(tmpdir(), "portcullis-lazy-"))
})
afterAll(() => {
  if (scratch !== "") rmSync(scratch, { recursive: true, force: true })
})
afterEach(killAll)

/**
 * A fresh working directory (for the default SQLite database) and a module hook, given through
 * NODE_OPTIONS, that notes in `log` the URL of every module resolved from node_modules.
 */
const watched = () => {
  const cwd = mkdtempSync(join(scratch, `run-${++runs}-`))
  const log = join(cwd, "modules.txt")
  const hook = moduleWatcher(cwd, log, "/node_modules/")
  return { cwd, log, nodeOptions: { NODE_OPTIONS: `--import=${hook}` } }
}

/** The packages whose modules the log names: for each URL, the package after its last node_modules/. */
const packagesIn = (log: string): ReadonlyArray<string> => {
  const urls = existsSync(log) ? readFileSync(log, "utf8").split("\n") : []
  const names = urls.flatMap((url) => {
    const name = [...url.matchAll(/\/node_modules\/((?:@[^/]+\/)?[^/]+)\//g)].at(-1)?.[1]
    return name === undefined ? [] : [name]
  })
  return [...new Set(names)]
}

const isOf = (name: string, prefix: string) => name === prefix || name.startsWith(`${prefix}/`)

/** The optional pieces of which some package was loaded. */
const piecesIn = (packages: ReadonlyArray<string>): ReadonlyArray<Piece> =>
  (Object.keys(optional) as Array<Piece>).filter((piece) =>
    optional[piece].some((prefix) => packages.some((name) => isOf(name, prefix)))
  )

/** The packages `serve` loads with these settings, once it answers /healthz. */
const servedPackages = async (vars: Readonly<Record<string, string>>) => {
  const { cwd, log, nodeOptions } = watched()
  const server = await startServer({ ...nodeOptions, ...vars }, { cwd })
  await server.stop()
  return packagesIn(log)
}

const ed25519Pem = generateKeyPairSync("ed25519").privateKey.export({ format: "pem", type: "pkcs8" }).toString()

describe("the optional pieces", () => {
  it("serve on the default settings (SQLite) loads none of them", { timeout: 60_000 }, async () => {
    const packages = await servedPackages({})
    // The hook sees the packages that are loaded: the default database's driver is one.
    expect(packages).toContain("better-sqlite3")
    expect(piecesIn(packages)).toEqual([])
  })

  it("serve loads @effect/platform module by module: never its index, which brings the Scalar API reference's 6.7 MB script", {
    timeout: 60_000
  }, async () => {
    const { cwd, log, nodeOptions } = watched()
    const server = await startServer(nodeOptions, { cwd })
    await server.stop()
    const platform = readFileSync(log, "utf8")
      .split("\n")
      .filter((url) => url.includes("/node_modules/@effect/platform/dist/"))
    expect(platform.some((url) => url.endsWith("/HttpApiBuilder.js"))).toBe(true)
    expect(platform.filter((url) => /\/dist\/esm\/(index|HttpApiScalar)\.js$/.test(url))).toEqual([])
  })

  const cases: ReadonlyArray<readonly [string, Readonly<Record<string, string>>, ReadonlyArray<Piece>]> = [
    ["METRICS_ENABLED", { SERVICE_METRICS_ENABLED: "true" }, ["opentelemetry"]],
    // Nothing listens there; spans are exported in batches, and a collector that is down loses them.
    ["OTEL_EXPORTER_OTLP_ENDPOINT", { OTEL_EXPORTER_OTLP_ENDPOINT: "http://127.0.0.1:9/" }, ["opentelemetry"]],
    [
      "PASSKEY_ENABLED",
      {
        SERVICE_PASSKEY_ENABLED: "true",
        SERVICE_PASSKEY_RP_ID: "localhost",
        SERVICE_PASSKEY_RP_NAME: "Portcullis",
        SERVICE_PASSKEY_ORIGINS: "http://localhost:3000"
      },
      ["passkeys"]
    ],
    // The transport connects when a mail is sent, not before.
    ["SMTP_URL", { SERVICE_SMTP_URL: "smtp://127.0.0.1:9" }, ["smtp"]],
    [
      "an OAuth provider",
      {
        SERVICE_OAUTH_GITHUB_CLIENT_ID: "id",
        SERVICE_OAUTH_GITHUB_CLIENT_SECRET: "secret",
        SERVICE_OAUTH_GITHUB_REDIRECT_URIS: "http://localhost:3000/callback"
      },
      ["oauth"]
    ],
    [
      "an asymmetric JWT_ALGORITHM",
      { SERVICE_JWT_ALGORITHM: "EdDSA", SERVICE_JWT_PRIVATE_KEY: ed25519Pem },
      ["asymmetricJwt"]
    ]
  ]
  it.each(cases)("serve with %s loads its piece and no other", { timeout: 60_000 }, async (_, vars, pieces) => {
    expect(piecesIn(await servedPackages(vars))).toEqual(pieces)
  })

  it.skipIf(testRedisUrl === undefined)(
    "serve with REDIS_URL loads ioredis and no other",
    { timeout: 60_000 },
    async () => {
      expect(piecesIn(await servedPackages({ SERVICE_REDIS_URL: testRedisUrl ?? "" }))).toEqual(["redis"])
    }
  )

  it.skipIf(noPostgres)("serve on PostgreSQL loads pg and no other", { timeout: 60_000 }, async () => {
    const packages = await Effect.runPromise(
      Effect.scoped(
        Effect.flatMap(freshSchemaUrl, ({ url }) => Effect.promise(() => servedPackages({ SERVICE_DATABASE_URL: url })))
      )
    )
    expect(piecesIn(packages)).toEqual(["postgres"])
    expect(packages).not.toContain("better-sqlite3")
  })

  it.each([["secret"], ["--help"]])(
    "%s loads none of them, nor the stores, the hasher or the HTTP server",
    { timeout: 60_000 },
    async (command) => {
      const { cwd, log, nodeOptions } = watched()
      expect((await runCli([command], nodeOptions, { cwd })).status).toBe(0)
      const packages = packagesIn(log)
      expect(packages).toContain("@effect/cli")
      expect(piecesIn(packages)).toEqual([])
      for (const server of ["@effect/sql", "better-sqlite3", "@node-rs/argon2", "undici", "ws", "msgpackr"]) {
        expect(packages).not.toContain(server)
      }
    }
  )
})
