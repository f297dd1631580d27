import { type ChildProcess, spawn } from "node:child_process"
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { request } from "node:http"
import { connect, createServer } from "node:net"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, afterEach, beforeAll, describe, expect, it } from "@effect/vitest"
import { runCli } from "../support/cliRun.js"
import {
  cleanEnv,
  cli,
  exited,
  freePort,
  killAll,
  moduleWatcher,
  readingDotenv,
  startServer
} from "../support/processes.js"

/** 48 bytes, so no warning about a missing key. */
const secretKey = "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKL"

let scratch = ""
let folders = 0
/** A fresh working directory, for its own .env and database. */
const folder = () => mkdtempSync(join(scratch, `run-${++folders}-`))

beforeAll(() => {
  scratch = mkdtempSync(join(tmpdir(), "portcullis-startup-"))
})
afterAll(() => {
  if (scratch !== "") rmSync(scratch, { recursive: true, force: true })
})

const children = new Set<ChildProcess>()
afterEach(async () => {
  for (const child of children) {
    if (child.exitCode === null && child.signalCode === null) {
      child.kill("SIGKILL")
      await exited(child, 5_000).catch(() => undefined)
    }
  }
  children.clear()
})

interface Served {
  readonly child: ChildProcess
  readonly stdout: () => string
  readonly stderr: () => string
}

/** The CLI in `cwd` with exactly these variables (no SERVICE_PORT unless given), node options first. */
const launch = (
  cwd: string,
  args: ReadonlyArray<string>,
  vars: Readonly<Record<string, string>>,
  nodeOptions: ReadonlyArray<string> = []
): Served => {
  const child = spawn(process.execPath, [...nodeOptions, cli, ...args], {
    cwd,
    env: cleanEnv(vars),
    stdio: ["ignore", "pipe", "pipe"]
  })
  children.add(child)
  let stdout = ""
  let stderr = ""
  child.stdout?.on("data", (chunk: Buffer) => {
    stdout += chunk.toString("utf8")
  })
  child.stderr?.on("data", (chunk: Buffer) => {
    stderr += chunk.toString("utf8")
  })
  return { child, stdout: () => stdout, stderr: () => stderr }
}

const serve = (cwd: string, vars: Readonly<Record<string, string>>) => launch(cwd, ["serve"], vars)

/**
 * A command run to its end; awaited rather than run synchronously, so that a slow start on a
 * busy machine does not starve vitest's worker.
 */
const run = (...args: Parameters<typeof launch>) => {
  const launched = launch(...args)
  return new Promise<{ readonly status: number | null; readonly stdout: string; readonly stderr: string }>((resolve) =>
    launched.child.once("close", (status) => resolve({ status, stdout: launched.stdout(), stderr: launched.stderr() }))
  )
}

/** Waits until /healthz on `port` answers 200; fails when the process ends first. */
const healthy = async (served: Served, port: number) => {
  const deadline = Date.now() + 25_000
  while (Date.now() < deadline) {
    if (served.child.exitCode !== null) throw new Error(`serve exited before answering:\n${served.stderr()}`)
    const status = await fetch(`http://127.0.0.1:${port}/healthz`, { signal: AbortSignal.timeout(1_000) }).then(
      (response) => response.status,
      () => 0
    )
    if (status === 200) return
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
  throw new Error(`no answer on ${port} within 25 s:\n${served.stdout()}${served.stderr()}`)
}

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

const lines = (text: string) => text.split("\n").filter((line) => line.trim() !== "")

/** One sentence: one line, no stack frame, no JSON log record. */
const expectOneSentence = (stderr: string, sentence: RegExp) => {
  expect(lines(stderr)).toEqual([expect.stringMatching(sentence)])
  expect(stderr).not.toMatch(/^\s+at /m)
  expect(stderr).not.toContain("{")
}

describe("the listen port", () => {
  it("is PORT when SERVICE_PORT is unset", async () => {
    const port = await freePort()
    const served = serve(folder(), {
      PORT: String(port),
      SERVICE_SECRET_KEY: secretKey,
      SERVICE_DATABASE_URL: "memory:"
    })
    await healthy(served, port)
  })
})

describe("the .env file of the working directory", () => {
  it("is read by serve", async () => {
    const cwd = folder()
    const port = await freePort()
    writeFileSync(
      join(cwd, ".env"),
      `SERVICE_PORT=${port}\nSERVICE_SECRET_KEY=${secretKey}\nSERVICE_DATABASE_URL=memory:\n`
    )
    await healthy(serve(cwd, readingDotenv), port)
  })

  it("gives way to the real environment, and SERVICE_PORT wins over PORT wherever each is set", async () => {
    const cwd = folder()
    writeFileSync(join(cwd, ".env"), "SERVICE_LOG_LEVEL=debug\nSERVICE_PORT=9100\nSERVICE_LOG_FORMAT=logfmt\n")
    const checked = await run(cwd, ["check"], {
      ...readingDotenv,
      SERVICE_LOG_LEVEL: "warning",
      PORT: "9300",
      SERVICE_DATABASE_URL: "memory:"
    })
    expect(checked.status).toBe(0)
    expect(lines(checked.stdout)).toEqual(
      expect.arrayContaining(["SERVICE_LOG_LEVEL=warning", "SERVICE_PORT=9100", "SERVICE_LOG_FORMAT=logfmt"])
    )

    // check shows the setting PORT gave as SERVICE_PORT's value: it is the setting that resolves.
    const fromPort = await run(folder(), ["check"], { PORT: "9300", SERVICE_DATABASE_URL: "memory:" })
    expect(lines(fromPort.stdout)).toContain("SERVICE_PORT=9300")
    expect(fromPort.stdout).not.toMatch(/^PORT=/m)
  })

  it("when malformed, stops start-up with one line naming the line, never its text", async () => {
    const cwd = folder()
    writeFileSync(join(cwd, ".env"), "SERVICE_LOG_LEVEL=info\nSERVICE_SECRET_KEY hunter2-hunter2\n")
    const refused = await run(cwd, ["serve"], { ...readingDotenv, SERVICE_DATABASE_URL: "memory:" })
    expect(refused.status).toBe(1)
    expectOneSentence(refused.stderr, /^\.env line 2 is not NAME=value or a # comment$/)
    expect(refused.stdout + refused.stderr).not.toContain("hunter2")
  })
})

describe("the .env file in a test run (hermetic tests)", () => {
  /** The settings of issue 42's .env that failed four test files when the tests' servers read it. */
  const developersDotenv = () => {
    const cwd = folder()
    writeFileSync(join(cwd, ".env"), "SERVICE_LOG_FORMAT=pretty\nSERVICE_MAILER=console\nSERVICE_PORT=1\n")
    return cwd
  }
  const withoutDotenv = ["SERVICE_LOG_FORMAT=json", "SERVICE_MAILER=", "SERVICE_PORT=8000"]

  it.each([
    ["PORTCULLIS_IGNORE_DOTENV=1", { PORTCULLIS_IGNORE_DOTENV: "1" }],
    ["NODE_ENV=test", { ...readingDotenv, NODE_ENV: "test" }]
  ])("is not read under %s", async (_, vars) => {
    const checked = await run(developersDotenv(), ["check"], { ...vars, SERVICE_DATABASE_URL: "memory:" })
    expect(checked.status).toBe(0)
    expect(lines(checked.stdout)).toEqual(expect.arrayContaining(withoutDotenv))
  })

  it("is read otherwise", async () => {
    const checked = await run(developersDotenv(), ["check"], { ...readingDotenv, SERVICE_DATABASE_URL: "memory:" })
    expect(checked.status).toBe(0)
    expect(lines(checked.stdout)).toEqual(
      expect.arrayContaining(["SERVICE_LOG_FORMAT=pretty", "SERVICE_MAILER=console", "SERVICE_PORT=1"])
    )
  })

  it("leaves serve on PORT with JSON lines, as the tests' servers expect, and no mail logged", async () => {
    // PORT, not SERVICE_PORT: the file's SERVICE_PORT=1 would win over it, were the file read.
    const port = await freePort()
    const served = serve(developersDotenv(), {
      PORTCULLIS_IGNORE_DOTENV: "1",
      PORT: String(port),
      SERVICE_SECRET_KEY: secretKey,
      SERVICE_DATABASE_URL: "memory:"
    })
    await healthy(served, port)
    const logged = lines(served.stdout())
    expect(logged.length).toBeGreaterThan(0)
    for (const line of logged) expect(() => JSON.parse(line)).not.toThrow()
    // The file's MAILER=console is not read: the mails go to the default, the development inbox.
    expect(served.stdout()).toContain("(SERVICE_MAILER=dev)")
    expect(served.stdout()).not.toContain("MAILER=console")
  })

  it("is not read by the suite's own helpers, startServer and runCli", async () => {
    const cwd = developersDotenv()
    try {
      const server = await startServer({ SERVICE_SECRET_KEY: secretKey, SERVICE_DATABASE_URL: "memory:" }, { cwd })
      await server.stop()
      for (const line of lines(server.output())) expect(() => JSON.parse(line)).not.toThrow()
    } finally {
      await killAll()
    }
    const checked = await runCli(["check"], { SERVICE_DATABASE_URL: "memory:" }, { cwd })
    expect(lines(checked.stdout)).toEqual(expect.arrayContaining(withoutDotenv))
  })

  it("refuses a PORTCULLIS_IGNORE_DOTENV that is no boolean, rather than read the file", async () => {
    const refused = await run(developersDotenv(), ["check"], { PORTCULLIS_IGNORE_DOTENV: "please" })
    expect(refused.status).toBe(1)
    expectOneSentence(refused.stderr, /^PORTCULLIS_IGNORE_DOTENV="please" is not a boolean; expected true, false/)
  })
})

describe("a start-up that cannot go on ends in one sentence and exit code 1", () => {
  /** Runs `serve` while another server holds the port of its setting `SERVICE_<setting>`. */
  const serveOnTakenPort = async (vars: Readonly<Record<string, string>>, setting = "PORT") => {
    const holder = createServer()
    const port = await new Promise<number>((resolve) =>
      holder.listen(0, "127.0.0.1", () => resolve((holder.address() as { port: number }).port))
    )
    try {
      const ports = { SERVICE_PORT: String(await freePort()), [`SERVICE_${setting}`]: String(port) }
      const refused = await run(folder(), ["serve"], { ...ports, SERVICE_SECRET_KEY: secretKey, ...vars })
      return { port, refused }
    } finally {
      holder.close()
    }
  }
  const inUse = (port: number, setting = "SERVICE_PORT") =>
    new RegExp(`^Cannot listen on 127\\.0\\.0\\.1:${port}: the address is already in use; .* ${setting}\\.$`)

  it("when the port is in use", async () => {
    const { port, refused } = await serveOnTakenPort({ SERVICE_DATABASE_URL: "memory:" })
    expect(refused.status).toBe(1)
    expectOneSentence(refused.stderr, inUse(port))
  })

  it("when the metrics' own port is in use, naming its setting", async () => {
    const { port, refused } = await serveOnTakenPort(
      { SERVICE_DATABASE_URL: "memory:", SERVICE_METRICS_ENABLED: "true" },
      "METRICS_PORT"
    )
    expect(refused.status).toBe(1)
    expectOneSentence(refused.stderr, inUse(port, "SERVICE_METRICS_PORT"))
  })

  it("when the port is in use with several workers, before any is started (none would ever listen)", async () => {
    // The port is tried before Redis, which does not answer there either.
    const { port, refused } = await serveOnTakenPort({
      SERVICE_WORKERS: "2",
      SERVICE_REDIS_URL: "redis://127.0.0.1:1",
      SERVICE_DATABASE_URL: `sqlite:${join(folder(), "portcullis.db")}`
    })
    expect(refused.status).toBe(1)
    expectOneSentence(refused.stderr, inUse(port))
  })

  it.each([
    ["one process", "1"],
    ["several workers, before any is started", "2"]
  ])("when REDIS_URL does not answer, naming it, at once, without its password (%s)", async (_, workers) => {
    const redisPort = await freePort()
    const started = Date.now()
    const refused = await run(folder(), ["serve"], {
      SERVICE_PORT: String(await freePort()),
      SERVICE_WORKERS: workers,
      SERVICE_SECRET_KEY: secretKey,
      SERVICE_DATABASE_URL: `sqlite:${join(folder(), "portcullis.db")}`,
      SERVICE_REDIS_URL: `redis://:Re5disPa55word@127.0.0.1:${redisPort}`
    })
    expect(refused.status).toBe(1)
    expectOneSentence(
      refused.stderr,
      new RegExp(
        `^Cannot use the Redis of SERVICE_REDIS_URL \\(redis://127\\.0\\.0\\.1:${redisPort}\\): connect ECONNREFUSED 127\\.0\\.0\\.1:${redisPort}\\.$`
      )
    )
    expect(refused.stdout + refused.stderr).not.toContain("Pa55word")
    // "At once": the driver's own retries (endless by default) are not waited for. The bound leaves
    // room for a process starting beside a full test run; a retrying start-up never ends.
    expect(Date.now() - started).toBeLessThan(15_000)
  })

  it("when the database cannot be reached, without its password", async () => {
    const refused = await run(folder(), ["serve"], {
      SERVICE_SECRET_KEY: secretKey,
      SERVICE_DATABASE_URL: "postgres://app:Pg5qlPa55word@127.0.0.1:1/x"
    })
    expect(refused.status).toBe(1)
    expectOneSentence(
      refused.stderr,
      /^Cannot use the database of SERVICE_DATABASE_URL \(postgres:\/\/127\.0\.0\.1:1\/x\): connect ECONNREFUSED 127\.0\.0\.1:1\.$/
    )
    expect(refused.stdout + refused.stderr).not.toContain("Pa55word")
  })

  it("when the SQLite file's folders do not exist, creating none of them", async () => {
    const missing = join(folder(), "nonexistent")
    const refused = await run(folder(), ["serve"], {
      SERVICE_SECRET_KEY: secretKey,
      SERVICE_DATABASE_URL: `sqlite:${join(missing, "dir", "x.db")}`
    })
    expect(refused.status).toBe(1)
    expectOneSentence(
      refused.stderr,
      /^Cannot use the database of SERVICE_DATABASE_URL \(sqlite:.*\/x\.db\): its folder .*\/dir does not exist/
    )
    expect(existsSync(missing)).toBe(false)
  })

  it("when the SQLite file's folder is not writable", async () => {
    // File modes do not stop root, which tests may run as; /proc/sys takes no new file from anyone.
    const refused = await run(folder(), ["serve"], {
      SERVICE_SECRET_KEY: secretKey,
      SERVICE_DATABASE_URL: "sqlite:/proc/sys/x.db"
    })
    expect(refused.status).toBe(1)
    expectOneSentence(
      refused.stderr,
      /^Cannot use the database of SERVICE_DATABASE_URL \(sqlite:\/proc\/sys\/x\.db\): \/proc\/sys is not writable by this process\.$/
    )
  })

  it.each([
    // Root passes the folder's check, and only the driver's open fails; anyone else, the check.
    [
      "a folder of /proc",
      (): string => "/proc/x.db",
      /: (unable to open database file|\/proc is not writable by this process)\.$/
    ],
    [
      "a file that is no database",
      (): string => {
        const file = join(folder(), "x.db")
        writeFileSync(file, "not a database, only text long enough to fill the header SQLite reads\n")
        return file
      },
      /: file is not a database\.$/
    ]
  ] as const)("when the driver cannot open the SQLite file (%s)", async (_, path, reason) => {
    const filename = path()
    const refused = await run(folder(), ["serve"], {
      SERVICE_SECRET_KEY: secretKey,
      SERVICE_DATABASE_URL: `sqlite:${filename}`
    })
    expect(refused.status).toBe(1)
    expectOneSentence(refused.stderr, /^Cannot use the database of SERVICE_DATABASE_URL \(sqlite:.*x\.db\): /)
    expect(refused.stderr.trim()).toMatch(reason)
    expect(refused.stdout).not.toContain("SqliteError")
  })

  it("but the file's own folder is created, as ./data is for the default", async () => {
    const cwd = folder()
    const port = await freePort()
    const served = serve(cwd, { SERVICE_PORT: String(port), SERVICE_SECRET_KEY: secretKey })
    await healthy(served, port)
    expect(existsSync(join(cwd, "data", "portcullis.db"))).toBe(true)
  })
})

describe("shutdown", () => {
  it("answers the request in flight at SIGTERM, then logs what it drained and closed, and exits", async () => {
    const port = await freePort()
    const served = serve(folder(), {
      SERVICE_PORT: String(port),
      SERVICE_SECRET_KEY: secretKey,
      SERVICE_DATABASE_URL: `sqlite:${join(folder(), "portcullis.db")}`
    })
    await healthy(served, port)

    // A sign-in whose body is only half sent: in flight until the rest comes.
    const body = JSON.stringify({ email: "nobody@example.com", password: "correct horse battery staple" })
    const half = Math.floor(body.length / 2)
    const inFlight = request({
      host: "127.0.0.1",
      port,
      method: "POST",
      path: "/api/v1/auth/login",
      agent: false,
      headers: { "content-type": "application/json", "content-length": Buffer.byteLength(body) }
    })
    const answered = new Promise<number>((resolve, reject) => {
      inFlight.once("response", (response) => {
        response.resume()
        resolve(response.statusCode ?? 0)
      })
      inFlight.once("error", reject)
    })
    inFlight.write(body.slice(0, half))
    await new Promise((resolve) => setTimeout(resolve, 500))

    served.child.kill("SIGTERM")
    const deadline = Date.now() + 5_000
    while ((await accepts(port)) && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 50))
    expect(await accepts(port)).toBe(false)
    inFlight.end(body.slice(half))
    expect(await answered).toBe(401)

    const exit = await exited(served.child, 5_000)
    expect(exit.code).toBe(0)
    const stopped = lines(served.stdout())
      .map((line) => JSON.parse(line) as Record<string, unknown>)
      .filter((record) => String(record.msg).startsWith("stopped:"))
    expect(stopped).toEqual([
      expect.objectContaining({
        level: "info",
        msg: "stopped: drained 1 in-flight request, closed the SQLite database",
        drained: 1
      })
    ])
  })
})

describe("tsx, the TypeScript deployment loader", () => {
  it("is loaded for a .ts deployment module only", { timeout: 90_000 }, async () => {
    const cwd = folder()
    const log = join(cwd, "tsx-modules.txt")
    const hook = moduleWatcher(folder(), log, "/node_modules/tsx/")
    writeFileSync(join(cwd, "deployment.ts"), "export default {}\n")
    const openapi = (args: ReadonlyArray<string>) =>
      run(cwd, ["openapi", ...args], { SERVICE_DATABASE_URL: "memory:" }, ["--import", hook])

    expect((await openapi([])).status).toBe(0)
    expect(existsSync(log)).toBe(false)
    expect((await openapi(["--config", "deployment.ts"])).status).toBe(0)
    expect(readFileSync(log, "utf8")).toContain("/node_modules/tsx/")
  })
})
