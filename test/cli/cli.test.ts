import { spawnSync } from "node:child_process"
import { mkdtempSync, rmSync } from "node:fs"
import { connect } from "node:net"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, afterEach, beforeAll, describe, expect, it } from "@effect/vitest"
import { cleanEnv, cli as entry, freePort, killAll, startServer } from "../support/processes.js"

/** A strong password for the operator commands; never the one that a test expects to be refused. */
const strongPassword = "correct horse battery staple"
/** A SECRET_KEY of 48 bytes, so the settings carry no warning about a missing key. */
const secretKey = "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKL"

let scratch = ""
let databaseCount = 0

/** A fresh SQLite file in the scratch folder; the file itself is created by the CLI. */
const freshDatabase = () => `sqlite:${join(scratch, `db-${++databaseCount}`, "portcullis.sqlite")}`

interface Run {
  readonly status: number | null
  readonly signal: NodeJS.Signals | null
  readonly stdout: string
  readonly stderr: string
  readonly elapsedMs: number
}

/** Runs the CLI to completion; a process still running after `timeout` ms is killed and reported. */
const cli = (
  args: ReadonlyArray<string>,
  vars: Readonly<Record<string, string>>,
  options: { readonly input?: string; readonly timeout?: number } = {}
): Run => {
  const started = Date.now()
  const result = spawnSync(process.execPath, [entry, ...args], {
    cwd: scratch,
    env: cleanEnv(vars),
    encoding: "utf8",
    timeout: options.timeout ?? 20_000,
    killSignal: "SIGKILL",
    ...(options.input === undefined ? { stdio: ["ignore", "pipe", "pipe"] } : { input: options.input })
  })
  const run = {
    status: result.status,
    signal: result.signal,
    stdout: result.stdout,
    stderr: result.stderr,
    elapsedMs: Date.now() - started
  }
  if (result.error !== undefined) {
    throw new Error(`portcullis ${args.join(" ")} failed to run: ${result.error.message}\n${run.stderr}`)
  }
  return run
}

/** The problem lines printed on stderr. */
const lines = (text: string) => text.split("\n").filter((line) => line.trim() !== "")

/** Whether a TCP connection to the port is accepted. */
const accepts = (port: number) =>
  new Promise<boolean>((resolve) => {
    const socket = connect({ host: "127.0.0.1", port })
    socket.once("connect", () => {
      socket.destroy()
      resolve(true)
    })
    socket.once("error", () => resolve(false))
  })

const login = (base: string, email: string, password: string) =>
  fetch(`${base}/api/v1/auth/login`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ email, password }),
    signal: AbortSignal.timeout(10_000)
  })

beforeAll(() => {
  scratch = mkdtempSync(join(tmpdir(), "portcullis-cli-"))
})

afterEach(killAll)

/** `serve` in the scratch folder, with a signing key so the log carries no warning about it. */
const serve = (vars: Readonly<Record<string, string>>) =>
  startServer({ SERVICE_SECRET_KEY: secretKey, ...vars }, { cwd: scratch })

afterAll(() => {
  if (scratch !== "") rmSync(scratch, { recursive: true, force: true })
})

describe("portcullis serve refuses bad settings", () => {
  it("exits 1 within seconds on SERVICE_PORT=abc, naming the variable and the expected form", () => {
    const run = cli(["serve"], { SERVICE_DATABASE_URL: freshDatabase(), SERVICE_PORT: "abc" }, { timeout: 10_000 })
    expect(run.status).toBe(1)
    expect(run.elapsedMs).toBeLessThan(10_000)
    expect(lines(run.stderr)).toEqual([
      expect.stringMatching(/^SERVICE_PORT="abc" .*expected an integer from 0 to 65535/)
    ])
    expect(run.stdout).not.toContain("Listening")
  })

  it("prints one line per invalid setting and never listens", async () => {
    const port = await freePort()
    const run = cli(
      ["serve"],
      {
        SERVICE_DATABASE_URL: freshDatabase(),
        SERVICE_PORT: String(port),
        SERVICE_LOCKOUT_ENABLED: "perhaps",
        SERVICE_JWT_LEEWAY_SECONDS: "-1"
      },
      { timeout: 10_000 }
    )
    expect(run.status).toBe(1)
    const problems = lines(run.stderr)
    expect(problems).toHaveLength(2)
    expect(problems.filter((line) => line.startsWith("SERVICE_LOCKOUT_ENABLED="))).toHaveLength(1)
    expect(problems.filter((line) => line.startsWith("SERVICE_JWT_LEEWAY_SECONDS="))).toHaveLength(1)
    for (const line of problems) expect(line).toContain("expected ")
    expect(run.stdout).not.toContain("Listening")
    expect(await accepts(port)).toBe(false)
  })

  it("refuses a SECRET_KEY shorter than 32 bytes without printing it", () => {
    const shortKey = "tooShortSecretValue9"
    const run = cli(["serve"], { SERVICE_DATABASE_URL: freshDatabase(), SERVICE_SECRET_KEY: shortKey })
    expect(run.status).toBe(1)
    expect(lines(run.stderr)).toEqual([expect.stringContaining("SERVICE_SECRET_KEY")])
    expect(run.stderr).not.toContain(shortKey)
    expect(run.stdout).not.toContain(shortKey)
  })

  it("stops with exit code 1 when the PostgreSQL of DATABASE_URL cannot be reached, without its password", () => {
    const run = cli(["serve"], { SERVICE_DATABASE_URL: "postgres://app:Pg5qlPa55word@127.0.0.1:1/portcullis" })
    expect(run.status).toBe(1)
    expect(lines(run.stderr)).toEqual([expect.stringMatching(/^Cannot use the database of SERVICE_DATABASE_URL /)])
    expect(run.stdout + run.stderr).not.toContain("Pa55word")
  })
})

describe("portcullis serve", () => {
  it("answers /healthz with the security headers and stops on SIGTERM", async () => {
    const server = await serve({ SERVICE_DATABASE_URL: freshDatabase() })
    const response = await fetch(`${server.url}/healthz`)
    expect(response.status).toBe(200)
    expect(await response.json()).toEqual({ status: "ok" })
    expect(response.headers.get("x-content-type-options")).toBe("nosniff")
    expect(response.headers.get("x-frame-options")).toBe("DENY")
    expect(response.headers.get("referrer-policy")).toBe("no-referrer")
    expect(response.headers.get("content-security-policy")).toContain("default-src 'none'")
    // http://localhost is not https, so no HSTS.
    expect(response.headers.get("strict-transport-security")).toBeNull()

    const exit = await server.stop()
    expect(exit.code === 0 || exit.signal === "SIGTERM").toBe(true)
    expect(await accepts(server.port)).toBe(false)
  })

  it("serves the OpenAPI document and the docs page under the auth prefix", async () => {
    const server = await serve({ SERVICE_DATABASE_URL: freshDatabase() })
    const openapi = await fetch(`${server.url}/api/v1/auth/openapi.json`)
    expect(openapi.status).toBe(200)
    expect(openapi.headers.get("content-type")).toContain("json")
    const document = (await openapi.json()) as { openapi: string; paths: Record<string, unknown> }
    expect(document.openapi).toMatch(/^3\./)
    expect(Object.keys(document.paths)).toContain("/api/v1/auth/login")
    expect(JSON.stringify(document)).not.toContain("HttpApiDecodeError")

    const docs = await fetch(`${server.url}/api/v1/auth/docs`)
    expect(docs.status).toBe(200)
    expect(docs.headers.get("content-type")).toContain("text/html")
    expect(docs.headers.get("x-frame-options")).toBe("DENY")
    await docs.arrayBuffer()
    await server.stop()
  })

  it("sends HSTS when PUBLIC_URL is https", async () => {
    const server = await serve({
      SERVICE_DATABASE_URL: freshDatabase(),
      SERVICE_PUBLIC_URL: "https://auth.example.com"
    })
    const response = await fetch(`${server.url}/healthz`)
    expect(response.headers.get("strict-transport-security")).toMatch(/max-age=\d+/)
    await server.stop()
  })

  it("logs the SECRET_KEY warning at start-up when no key is set", async () => {
    const server = await startServer({ SERVICE_DATABASE_URL: freshDatabase() }, { cwd: scratch })
    expect(server.output()).toContain("Listening")
    expect(server.output()).toContain("SERVICE_SECRET_KEY is not set")
    await server.stop()
  })
})

describe("portcullis migrate", () => {
  it("applies the migrations to a fresh file, then finds the database up to date", () => {
    const vars = { SERVICE_DATABASE_URL: freshDatabase() }
    const first = cli(["migrate"], vars)
    expect(first.status).toBe(0)
    expect(first.stdout).toMatch(/^Applied: 0001_\w+/)
    const second = cli(["migrate"], vars)
    expect(second.status).toBe(0)
    expect(second.stdout.trim()).toBe("The database is up to date.")
  })

  it("refuses an invalid setting", () => {
    const run = cli(["migrate"], { SERVICE_DATABASE_URL: "mysql://db/x" })
    expect(run.status).toBe(1)
    expect(run.stderr).toContain("SERVICE_DATABASE_URL")
  })
})

describe("portcullis create-superuser and user update", () => {
  it("creates a superuser once, and refuses the same email a second time", () => {
    const vars = { SERVICE_DATABASE_URL: freshDatabase() }
    const args = ["create-superuser", "--email", "root@example.com", "--password", strongPassword]
    const first = cli(args, vars)
    expect(first.status).toBe(0)
    expect(first.stdout).toContain("root@example.com")
    expect(first.stderr).toBe("")
    expect(first.stdout).not.toContain(strongPassword)

    const second = cli(args, vars)
    expect(second.status).toBe(1)
    expect(lines(second.stderr)).toEqual([expect.stringMatching(/already exists/)])
  })

  it("refuses a weak password, naming the rule", () => {
    const run = cli(["create-superuser", "--email", "weak@example.com", "--password", "short"], {
      SERVICE_DATABASE_URL: freshDatabase()
    })
    expect(run.status).toBe(1)
    expect(lines(run.stderr)).toEqual([expect.stringMatching(/at least 8 characters/)])
  })

  it("refuses an invalid email", () => {
    const run = cli(["create-superuser", "--email", "not-an-email", "--password", strongPassword], {
      SERVICE_DATABASE_URL: freshDatabase()
    })
    expect(run.status).toBe(1)
    expect(lines(run.stderr)).toEqual([expect.stringContaining("not-an-email")])
    expect(run.stderr).toMatch(/not an email/)
  })

  it("refuses an invalid setting before doing anything", () => {
    const run = cli(["create-superuser", "--email", "root@example.com", "--password", strongPassword], {
      SERVICE_DATABASE_URL: freshDatabase(),
      SERVICE_PASSWORD_MIN_LENGTH: "many"
    })
    expect(run.status).toBe(1)
    expect(run.stderr).toContain("SERVICE_PASSWORD_MIN_LENGTH")
  })

  it("reads the password from standard input when --password is omitted", () => {
    const vars = { SERVICE_DATABASE_URL: freshDatabase() }
    const run = cli(["create-superuser", "--email", "stdin@example.com"], vars, { input: `${strongPassword}\n` })
    expect(run.status).toBe(0)
    expect(run.stdout).toContain("stdin@example.com")

    const empty = cli(["create-superuser", "--email", "empty@example.com"], vars, { input: "" })
    expect(empty.status).toBe(1)
    expect(empty.stderr).toMatch(/at least 8 characters/)
  })

  it("a superuser from standard input signs in over HTTP, until user update deactivates them", async () => {
    const vars = { SERVICE_DATABASE_URL: freshDatabase() }
    const created = cli(["create-superuser", "--email", "admin@example.com"], vars, { input: `${strongPassword}\n` })
    expect(created.status).toBe(0)

    const server = await serve(vars)
    const signedIn = await login(server.url, "admin@example.com", strongPassword)
    expect(signedIn.status).toBe(200)
    const body = (await signedIn.json()) as { user: { email: string; is_superuser: boolean; is_verified: boolean } }
    expect(body.user).toMatchObject({ email: "admin@example.com", is_superuser: true, is_verified: true })

    // The operator command works beside a running server on the same file.
    const updated = cli(["user", "update", "--email", "admin@example.com", "--active", "false"], vars)
    expect(updated.status).toBe(0)
    expect((await login(server.url, "admin@example.com", strongPassword)).status).toBe(401)
    await server.stop()
  })

  it("user update prints the changed user, and refuses an unknown email", () => {
    const vars = { SERVICE_DATABASE_URL: freshDatabase() }
    expect(cli(["create-superuser", "--email", "root@example.com", "--password", strongPassword], vars).status).toBe(0)

    const run = cli(["user", "update", "--email", "root@example.com", "--active", "false"], vars)
    expect(run.status).toBe(0)
    const user = JSON.parse(run.stdout) as Record<string, unknown>
    expect(user).toMatchObject({
      email: "root@example.com",
      is_active: false,
      is_verified: true,
      is_superuser: true
    })
    expect(user).not.toHaveProperty("hashed_password")
    expect(run.stdout).not.toContain("$argon2")

    const flags = cli(
      [
        "user",
        "update",
        "--email",
        "root@example.com",
        "--active",
        "true",
        "--verified",
        "false",
        "--superuser",
        "false"
      ],
      vars
    )
    expect(flags.status).toBe(0)
    expect(JSON.parse(flags.stdout)).toMatchObject({ is_active: true, is_verified: false, is_superuser: false })

    const unknown = cli(["user", "update", "--email", "nobody@example.com", "--active", "false"], vars)
    expect(unknown.status).toBe(1)
    expect(lines(unknown.stderr)).toHaveLength(1)
    expect(unknown.stdout).toBe("")
  })

  it("user update refuses a flag value other than true or false", () => {
    const run = cli(["user", "update", "--email", "root@example.com", "--active", "maybe"], {
      SERVICE_DATABASE_URL: freshDatabase()
    })
    expect(run.status).toBe(1)
    expect(run.stderr).toMatch(/true, false/)
  })
})

describe("portcullis check", () => {
  it("prints the resolved settings and warnings as JSON, with the secret key redacted", () => {
    const run = cli(["check"], { SERVICE_DATABASE_URL: freshDatabase(), SERVICE_SECRET_KEY: secretKey })
    expect(run.status).toBe(0)
    const report = JSON.parse(run.stdout) as { settings: Record<string, unknown>; warnings: ReadonlyArray<string> }
    expect(report.settings.secretKey).toBe("<redacted>")
    expect(report.settings.port).toBe(8000)
    expect(report.settings.authPrefix).toBe("/api/v1/auth")
    expect(report.warnings).toEqual([])
    expect(run.stdout).not.toContain(secretKey)
    expect(run.stderr).not.toContain(secretKey)
  })

  it("lists every warning, the unset SECRET_KEY and an unknown variable included", () => {
    const run = cli(["check"], { SERVICE_DATABASE_URL: freshDatabase(), SERVICE_PROT: "9000" })
    expect(run.status).toBe(0)
    const report = JSON.parse(run.stdout) as { settings: Record<string, unknown>; warnings: ReadonlyArray<string> }
    expect(report.settings.secretKey).toBeNull()
    expect(report.warnings).toHaveLength(2)
    expect(report.warnings.some((warning) => warning.includes("SERVICE_SECRET_KEY"))).toBe(true)
    expect(report.warnings.some((warning) => warning.includes("SERVICE_PROT"))).toBe(true)
  })

  it("exits 1 on an invalid setting, naming it", () => {
    const run = cli(["check"], { SERVICE_DATABASE_URL: freshDatabase(), SERVICE_LOCKOUT_ENABLED: "perhaps" })
    expect(run.status).toBe(1)
    expect(lines(run.stderr)).toEqual([expect.stringMatching(/^SERVICE_LOCKOUT_ENABLED="perhaps" .*expected /)])
  })

  it("accepts a postgres:// DATABASE_URL and an SMTP URL, never showing their passwords", () => {
    const run = cli(["check"], {
      SERVICE_DATABASE_URL: "postgres://app:Pg5qlPa55word@db.internal/portcullis",
      SERVICE_SMTP_URL: "smtps://mailer:Sm7pPa55word@mail.example.com:465"
    })
    expect(run.status).toBe(0)
    expect(run.stderr).not.toContain("SMTP_URL")
    expect((JSON.parse(run.stdout) as { settings: { smtpUrl: unknown } }).settings.smtpUrl).toBe("<redacted>")
    expect(`${run.stdout}${run.stderr}`).not.toContain("Pa55word")
  })
})

describe("portcullis secret", () => {
  it("prints a new random base64url key each run, which check accepts as SERVICE_SECRET_KEY", () => {
    const first = cli(["secret"], {})
    const second = cli(["secret"], {})
    expect(first.status).toBe(0)
    expect(second.status).toBe(0)
    expect(first.stdout).toMatch(/^[A-Za-z0-9_-]{43,}\n$/)
    expect(second.stdout).toMatch(/^[A-Za-z0-9_-]{43,}\n$/)
    const key = first.stdout.trim()
    expect(second.stdout.trim()).not.toBe(key)

    const check = cli(["check"], { SERVICE_DATABASE_URL: freshDatabase(), SERVICE_SECRET_KEY: key })
    expect(check.status).toBe(0)
    expect((JSON.parse(check.stdout) as { warnings: ReadonlyArray<string> }).warnings).toEqual([])
    expect(check.stdout).not.toContain(key)
  })
})

describe("portcullis openapi", () => {
  interface Document {
    readonly openapi: string
    readonly paths: Record<string, Record<string, { responses: Record<string, unknown> }>>
    readonly components: { readonly schemas: Record<string, unknown> }
  }

  it("prints an OpenAPI 3.1 document whose paths use the configured prefix", () => {
    const run = cli(["openapi"], { SERVICE_DATABASE_URL: freshDatabase(), SERVICE_API_PREFIX: "/v2" })
    expect(run.status).toBe(0)
    const document = JSON.parse(run.stdout) as Document
    expect(document.openapi).toMatch(/^3\.1\./)
    const paths = Object.keys(document.paths)
    expect(paths).toContain("/v2/auth/login")
    expect(paths).toContain("/v2/auth/register")
    expect(paths).toContain("/healthz")
    expect(paths.filter((path) => path.startsWith("/api/v1"))).toEqual([])
  })

  it("documents 422 ValidationError problems and no HttpApiDecodeError", () => {
    const run = cli(["openapi"], { SERVICE_DATABASE_URL: freshDatabase() })
    expect(run.status).toBe(0)
    const document = JSON.parse(run.stdout) as Document
    expect(run.stdout).not.toContain("HttpApiDecodeError")
    expect(document.components.schemas).toHaveProperty("ValidationError")
    const login = document.paths["/api/v1/auth/login"]?.post
    expect(login?.responses["422"]).toEqual({
      description: expect.any(String),
      content: { "application/problem+json": { schema: { $ref: "#/components/schemas/ValidationError" } } }
    })
    expect(login?.responses).not.toHaveProperty("400")
  })

  it("uses an empty prefix when both prefixes are empty", () => {
    const run = cli(["openapi"], {
      SERVICE_DATABASE_URL: freshDatabase(),
      SERVICE_API_PREFIX: "",
      SERVICE_AUTH_ROUTER_PREFIX: ""
    })
    expect(run.status).toBe(0)
    expect(Object.keys((JSON.parse(run.stdout) as Document).paths)).toContain("/login")
  })
})
