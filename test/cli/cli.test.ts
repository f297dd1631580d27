import { mkdtempSync, rmSync } from "node:fs"
import { connect } from "node:net"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, afterEach, beforeAll, describe, expect, it } from "@effect/vitest"
import { type CliRunOptions, lines, runCli, runCliInProcess } from "../support/cliRun.js"
import { freePort, killAll, startServer } from "../support/processes.js"

/** A strong password for the operator commands; never the one that a test expects to be refused. */
const strongPassword = "correct horse battery staple"
/** A SECRET_KEY of 48 bytes, so the settings carry no warning about a missing key. */
const secretKey = "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKL"

let scratch = ""
let databaseCount = 0

/** A fresh SQLite file in the scratch folder; the file itself is created by the CLI. */
const freshDatabase = () => `sqlite:${join(scratch, `db-${++databaseCount}`, "portcullis.sqlite")}`

/** The CLI run as a process in the scratch folder: serve's refusals are the process's to show (it ends). */
const cli = (args: ReadonlyArray<string>, vars: Readonly<Record<string, string>>, options: CliRunOptions = {}) =>
  runCli(args, vars, { cwd: scratch, ...options })

/** An operator command run in this process: its answer is what is under test, not the process. */
const operator = runCliInProcess

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

/**
 * A sign-in on a connection of its own: a kept-alive one may be closed by the server while a
 * slow CLI run goes on between two sign-ins.
 */
const login = (base: string, email: string, password: string) =>
  fetch(`${base}/api/v1/auth/login`, {
    method: "POST",
    headers: { "content-type": "application/json", connection: "close" },
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
  it("exits 1 within seconds on SERVICE_PORT=abc, naming the variable and the expected form", async () => {
    const run = await cli(
      ["serve"],
      { SERVICE_DATABASE_URL: freshDatabase(), SERVICE_PORT: "abc" },
      { timeout: 10_000 }
    )
    expect(run.status).toBe(1)
    expect(run.elapsedMs).toBeLessThan(10_000)
    expect(lines(run.stderr)).toEqual([
      expect.stringMatching(/^SERVICE_PORT="abc" .*expected an integer from 0 to 65535/)
    ])
    expect(run.stdout).not.toContain("Listening")
  })

  it("prints one line per invalid setting and never listens", async () => {
    const port = await freePort()
    const run = await cli(
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

  it("refuses a SECRET_KEY shorter than 32 bytes without printing it", async () => {
    const shortKey = "tooShortSecretValue9"
    const run = await cli(["serve"], { SERVICE_DATABASE_URL: freshDatabase(), SERVICE_SECRET_KEY: shortKey })
    expect(run.status).toBe(1)
    expect(lines(run.stderr)).toEqual([expect.stringContaining("SERVICE_SECRET_KEY")])
    expect(run.stderr).not.toContain(shortKey)
    expect(run.stdout).not.toContain(shortKey)
  })

  it("stops with exit code 1 when the PostgreSQL of DATABASE_URL cannot be reached, without its password", async () => {
    const run = await cli(["serve"], { SERVICE_DATABASE_URL: "postgres://app:Pg5qlPa55word@127.0.0.1:1/portcullis" })
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
  it("applies the migrations to a fresh file, then finds the database up to date", async () => {
    const vars = { SERVICE_DATABASE_URL: freshDatabase() }
    const first = await operator(["migrate"], vars)
    expect(first.status).toBe(0)
    expect(first.stdout).toMatch(/^Applied: 0001_\w+/)
    const second = await operator(["migrate"], vars)
    expect(second.status).toBe(0)
    expect(second.stdout.trim()).toBe("The database is up to date.")
  }, 60_000)

  it("refuses an invalid setting", async () => {
    const run = await operator(["migrate"], { SERVICE_DATABASE_URL: "mysql://db/x" })
    expect(run.status).toBe(1)
    expect(run.stderr).toContain("SERVICE_DATABASE_URL")
  })
})

describe("portcullis create-superuser and user update", () => {
  it("creates a superuser once, and refuses the same email a second time", async () => {
    const vars = { SERVICE_DATABASE_URL: freshDatabase() }
    const args = ["create-superuser", "--email", "root@example.com", "--password", strongPassword]
    const first = await operator(args, vars)
    expect(first.status).toBe(0)
    expect(first.stdout).toContain("root@example.com")
    expect(first.stderr).toBe("")
    expect(first.stdout).not.toContain(strongPassword)

    const second = await operator(args, vars)
    expect(second.status).toBe(1)
    expect(lines(second.stderr)).toEqual([expect.stringMatching(/already exists/)])
  }, 60_000)

  it("refuses a weak password, naming the rule", async () => {
    const run = await operator(["create-superuser", "--email", "weak@example.com", "--password", "short"], {
      SERVICE_DATABASE_URL: freshDatabase()
    })
    expect(run.status).toBe(1)
    expect(lines(run.stderr)).toEqual([expect.stringMatching(/at least 8 characters/)])
  })

  it("refuses an invalid email", async () => {
    const run = await operator(["create-superuser", "--email", "not-an-email", "--password", strongPassword], {
      SERVICE_DATABASE_URL: freshDatabase()
    })
    expect(run.status).toBe(1)
    expect(lines(run.stderr)).toEqual([expect.stringContaining("not-an-email")])
    expect(run.stderr).toMatch(/not an email/)
  })

  it("refuses an invalid setting before doing anything", async () => {
    const run = await operator(["create-superuser", "--email", "root@example.com", "--password", strongPassword], {
      SERVICE_DATABASE_URL: freshDatabase(),
      SERVICE_PASSWORD_MIN_LENGTH: "many"
    })
    expect(run.status).toBe(1)
    expect(run.stderr).toContain("SERVICE_PASSWORD_MIN_LENGTH")
  })

  it("reads the password from the first line of standard input with --password-stdin", async () => {
    const vars = { SERVICE_DATABASE_URL: freshDatabase() }
    // As a process, once: its own standard input and exit code, as main/cli.ts gives them.
    const run = await cli(["create-superuser", "--email", "stdin@example.com", "--password-stdin"], vars, {
      input: `${strongPassword}\nignored second line\n`
    })
    expect(run.status).toBe(0)
    expect(run.stdout).toContain("stdin@example.com")

    const empty = await operator(["create-superuser", "--email", "empty@example.com", "--password-stdin"], vars, {
      input: ""
    })
    expect(empty.status).toBe(1)
    expect(empty.stderr).toMatch(/at least 8 characters/)
  }, 60_000)

  it("refuses to prompt for the password without a terminal, in one line, before touching the database", async () => {
    const database = freshDatabase()
    for (const input of [undefined, `${strongPassword}\n`]) {
      const run = await operator(
        ["create-superuser", "--email", "root@example.com"],
        { SERVICE_DATABASE_URL: database },
        input === undefined ? {} : { input }
      )
      expect(run.status).toBe(1)
      expect(lines(run.stderr)).toEqual([
        expect.stringMatching(/^No terminal to ask for the password on: .*--password-stdin/)
      ])
      expect(run.stdout).toBe("")
    }
    const both = await operator(
      ["create-superuser", "--email", "root@example.com", "--password", strongPassword, "--password-stdin"],
      { SERVICE_DATABASE_URL: database },
      { input: `${strongPassword}\n` }
    )
    expect(both.status).toBe(1)
    expect(lines(both.stderr)).toEqual([expect.stringContaining("use one")])
    // Nobody was created by the refused runs.
    expect((await operator(["user", "list", "--json"], { SERVICE_DATABASE_URL: database })).stdout).toContain(
      '"users": []'
    )
  }, 120_000)

  it("a superuser from standard input signs in over HTTP, until user update deactivates them", async () => {
    const vars = { SERVICE_DATABASE_URL: freshDatabase() }
    const created = await operator(["create-superuser", "--email", "admin@example.com", "--password-stdin"], vars, {
      input: `${strongPassword}\n`
    })
    expect(created.status).toBe(0)

    const server = await serve(vars)
    const signedIn = await login(server.url, "admin@example.com", strongPassword)
    expect(signedIn.status).toBe(200)
    const body = (await signedIn.json()) as { user: { email: string; is_superuser: boolean; is_verified: boolean } }
    expect(body.user).toMatchObject({ email: "admin@example.com", is_superuser: true, is_verified: true })

    // The operator command works beside a running server on the same file.
    const updated = await operator(["user", "update", "--email", "admin@example.com", "--active", "false"], vars)
    expect(updated.status).toBe(0)
    expect((await login(server.url, "admin@example.com", strongPassword)).status).toBe(401)
    await server.stop()
  }, 90_000)

  it("user update prints the changed user, and refuses an unknown email", async () => {
    const vars = { SERVICE_DATABASE_URL: freshDatabase() }
    expect(
      (await operator(["create-superuser", "--email", "root@example.com", "--password", strongPassword], vars)).status
    ).toBe(0)

    const run = await operator(["user", "update", "--email", "root@example.com", "--active", "false"], vars)
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

    const flags = await operator(
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

    const unknown = await operator(["user", "update", "--email", "nobody@example.com", "--active", "false"], vars)
    expect(unknown.status).toBe(1)
    expect(lines(unknown.stderr)).toHaveLength(1)
    expect(unknown.stdout).toBe("")
  }, 120_000)

  it("user update refuses a flag value other than true or false", async () => {
    const run = await operator(["user", "update", "--email", "root@example.com", "--active", "maybe"], {
      SERVICE_DATABASE_URL: freshDatabase()
    })
    expect(run.status).toBe(1)
    expect(run.stderr).toMatch(/true, false/)
  })
})

describe("portcullis check", () => {
  /** `SERVICE_NAME=value` lines as a map. */
  const variables = (stdout: string) =>
    new Map(lines(stdout).map((line) => [line.slice(0, line.indexOf("=")), line.slice(line.indexOf("=") + 1)]))

  it("prints every setting by its variable's name, as it resolves, defaults included, the secret key masked", async () => {
    const database = freshDatabase()
    const run = await operator(["check"], {
      SERVICE_DATABASE_URL: database,
      SERVICE_SECRET_KEY: secretKey,
      SERVICE_LOCKOUT_ENABLED: "yes",
      SERVICE_CORS_ORIGINS: '["https://a.example.com","https://b.example.com"]',
      SERVICE_AUTH_RATE_LIMITS: '{"login":"7/30s"}'
    })
    expect(run.status).toBe(0)
    expect(run.stderr).toBe("")
    for (const line of lines(run.stdout)) expect(line).toMatch(/^(SERVICE|OTEL)_[A-Z0-9_]+=/)
    const shown = variables(run.stdout)
    expect(shown.get("SERVICE_PORT")).toBe("8000")
    expect(shown.get("SERVICE_HOST")).toBe("127.0.0.1")
    expect(shown.get("SERVICE_API_PREFIX")).toBe("/api/v1")
    expect(shown.get("SERVICE_DATABASE_URL")).toBe(database)
    expect(shown.get("SERVICE_SECRET_KEY")).toBe("***")
    expect(shown.get("SERVICE_LOCKOUT_ENABLED")).toBe("true")
    expect(shown.get("SERVICE_CORS_ORIGINS")).toBe("https://a.example.com,https://b.example.com")
    expect(JSON.parse(shown.get("SERVICE_AUTH_RATE_LIMITS") ?? "")).toMatchObject({
      login: "7/30s",
      register: "3/minute"
    })
    expect(shown.get("SERVICE_JWT_AUDIENCE")).toBe("")
    expect(shown.get("SERVICE_PUBLIC_URL")).toBe("http://localhost:8000/")
    expect(shown.has("SERVICE_LOG_LEVEL")).toBe(true)
    expect(run.stdout).not.toContain(secretKey)
  })

  it("--json: the same settings by name, unset ones null, and every warning, an unknown variable's included", async () => {
    const run = await operator(["check", "--json"], { SERVICE_DATABASE_URL: freshDatabase(), SERVICE_PROT: "9000" })
    expect(run.status).toBe(0)
    const report = JSON.parse(run.stdout) as {
      settings: Record<string, string | null>
      warnings: ReadonlyArray<string>
    }
    expect(report.settings.SERVICE_PORT).toBe("8000")
    expect(report.settings.SERVICE_SECRET_KEY).toBeNull()
    expect(Object.keys(report.settings).every((name) => /^(SERVICE|OTEL)_/.test(name))).toBe(true)
    expect(report.warnings).toHaveLength(2)
    expect(report.warnings.some((warning) => warning.includes("SERVICE_SECRET_KEY"))).toBe(true)
    expect(report.warnings.some((warning) => warning.includes("SERVICE_PROT"))).toBe(true)
  })

  it("without --json, warnings go to stderr, one line each", async () => {
    const run = await operator(["check"], { SERVICE_DATABASE_URL: freshDatabase(), SERVICE_PROT: "9000" })
    expect(run.status).toBe(0)
    expect(lines(run.stderr)).toEqual([
      expect.stringMatching(/^warning: SERVICE_SECRET_KEY/),
      expect.stringMatching(/^warning: SERVICE_PROT/)
    ])
  })

  it("exits 1 on an invalid setting, naming it", async () => {
    const run = await operator(["check"], { SERVICE_DATABASE_URL: freshDatabase(), SERVICE_LOCKOUT_ENABLED: "perhaps" })
    expect(run.status).toBe(1)
    expect(lines(run.stderr)).toEqual([expect.stringMatching(/^SERVICE_LOCKOUT_ENABLED="perhaps" .*expected /)])
  })

  it("masks only the passwords of URLs, and client secrets, keys and provider lists whole", async () => {
    const run = await operator(["check"], {
      SERVICE_DATABASE_URL: "postgres://app:Pg5qlPa55word@db.internal/portcullis",
      SERVICE_SMTP_URL: "smtps://mailer:Sm7pPa55word@mail.example.com:465",
      SERVICE_REDIS_URL: "redis://:Red1sPa55word@cache.internal:6379/0",
      SERVICE_OAUTH_GITHUB_CLIENT_ID: "github-client-id",
      SERVICE_OAUTH_GITHUB_CLIENT_SECRET: "GhClientPa55word",
      SERVICE_OAUTH_GITHUB_REDIRECT_URIS: "https://app.example.com/callback",
      SERVICE_OAUTH_CUSTOM_PROVIDERS: JSON.stringify([
        {
          name: "corp",
          authorization_endpoint: "https://sso.example.com/authorize",
          token_endpoint: "https://sso.example.com/token",
          userinfo_endpoint: "https://sso.example.com/userinfo",
          client_id: "corp-client",
          client_secret: "CorpClientPa55word",
          redirect_uris: ["https://app.example.com/corp"]
        }
      ]),
      SERVICE_SECRET_KEY: `${secretKey}Pa55word`
    })
    expect(run.status).toBe(0)
    const shown = variables(run.stdout)
    expect(shown.get("SERVICE_DATABASE_URL")).toBe("postgres://app:***@db.internal/portcullis")
    expect(shown.get("SERVICE_SMTP_URL")).toBe("smtps://mailer:***@mail.example.com:465")
    expect(shown.get("SERVICE_REDIS_URL")).toBe("redis://:***@cache.internal:6379/0")
    expect(shown.get("SERVICE_OAUTH_GITHUB_CLIENT_ID")).toBe("github-client-id")
    expect(shown.get("SERVICE_OAUTH_GITHUB_CLIENT_SECRET")).toBe("***")
    expect(shown.get("SERVICE_OAUTH_CUSTOM_PROVIDERS")).toBe("***")
    expect(shown.get("SERVICE_SECRET_KEY")).toBe("***")
    expect(`${run.stdout}${run.stderr}`).not.toContain("Pa55word")
  })
})

describe("portcullis secret", () => {
  it("prints a new random base64url key each run, which check accepts as SERVICE_SECRET_KEY", async () => {
    const first = await operator(["secret"], {})
    const second = await operator(["secret"], {})
    expect(first.status).toBe(0)
    expect(second.status).toBe(0)
    expect(first.stdout).toMatch(/^[A-Za-z0-9_-]{43,}\n$/)
    expect(second.stdout).toMatch(/^[A-Za-z0-9_-]{43,}\n$/)
    const key = first.stdout.trim()
    expect(second.stdout.trim()).not.toBe(key)

    const check = await operator(["check", "--json"], {
      SERVICE_DATABASE_URL: freshDatabase(),
      SERVICE_SECRET_KEY: key
    })
    expect(check.status).toBe(0)
    expect((JSON.parse(check.stdout) as { warnings: ReadonlyArray<string> }).warnings).toEqual([])
    expect(check.stdout).not.toContain(key)
  }, 90_000)
})

describe("portcullis openapi", () => {
  interface Document {
    readonly openapi: string
    readonly paths: Record<string, Record<string, { responses: Record<string, unknown> }>>
    readonly components: { readonly schemas: Record<string, unknown> }
  }

  it("prints an OpenAPI 3.1 document whose paths use the configured prefix", async () => {
    const run = await operator(["openapi"], { SERVICE_DATABASE_URL: freshDatabase(), SERVICE_API_PREFIX: "/v2" })
    expect(run.status).toBe(0)
    const document = JSON.parse(run.stdout) as Document
    expect(document.openapi).toMatch(/^3\.1\./)
    const paths = Object.keys(document.paths)
    expect(paths).toContain("/v2/auth/login")
    expect(paths).toContain("/v2/auth/register")
    expect(paths).toContain("/healthz")
    expect(paths.filter((path) => path.startsWith("/api/v1"))).toEqual([])
  })

  it("documents 422 ValidationError problems and no HttpApiDecodeError", async () => {
    const run = await operator(["openapi"], { SERVICE_DATABASE_URL: freshDatabase() })
    expect(run.status).toBe(0)
    const document = JSON.parse(run.stdout) as Document
    expect(run.stdout).not.toContain("HttpApiDecodeError")
    expect(document.components.schemas).toHaveProperty("ValidationError")
    const login = document.paths["/api/v1/auth/login"]?.post
    expect(login?.responses["422"]).toEqual({
      description: expect.any(String),
      content: {
        "application/problem+json": {
          schema: { $ref: "#/components/schemas/ValidationError" },
          example: expect.objectContaining({ code: "ValidationError", status: 422 })
        }
      }
    })
    expect(login?.responses).not.toHaveProperty("400")
  })

  it("uses an empty prefix when both prefixes are empty", async () => {
    const run = await operator(["openapi"], {
      SERVICE_DATABASE_URL: freshDatabase(),
      SERVICE_API_PREFIX: "",
      SERVICE_AUTH_ROUTER_PREFIX: ""
    })
    expect(run.status).toBe(0)
    expect(Object.keys((JSON.parse(run.stdout) as Document).paths)).toContain("/login")
  })
})
