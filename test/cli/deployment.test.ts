import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join, resolve } from "node:path"
import { afterEach, describe, expect, it } from "vitest"
import { runCli } from "../support/cliRun.js"
import { killAll, startServer, temporaryDatabase } from "../support/processes.js"

const secret = { SERVICE_SECRET_KEY: "deployment-test-secret-key-of-32-bytes-or-more" }
/** A service others reach (PUBLIC_URL not loopback): without a mailer its mails are dropped, not kept in the development inbox. */
const reached = { ...secret, SERVICE_PUBLIC_URL: "https://auth.example.com" }
const folder = () => mkdtempSync(join(tmpdir(), "portcullis-deployment-"))
/** Inside the project, so that a deployment's `import ... from "effect"` resolves. */
const projectFolder = () => {
  const parent = resolve(".cache", "test-deployments")
  mkdirSync(parent, { recursive: true })
  return mkdtempSync(join(parent, "deployment-"))
}

/** A deployment whose send handler writes "<email> <token>" lines to a file the test reads. */
const moduleSource = (outbox: string, typed: boolean) => {
  const parameters = typed ? "email: string, token: string" : "email, token"
  return [
    'import { appendFileSync } from "node:fs"',
    "export default {",
    "  events: {",
    `    send_verification_email: (${parameters}) => {`,
    `      appendFileSync(${JSON.stringify(outbox)}, email + " " + token + "\\n")`,
    "    }",
    "  }",
    "}",
    ""
  ].join("\n")
}

const post = (url: string, body: unknown) =>
  fetch(url, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) })

const waitForLine = async (file: string, email: string) => {
  for (let i = 0; i < 100; i++) {
    const line = (() => {
      try {
        return readFileSync(file, "utf8")
          .split("\n")
          .find((entry) => entry.startsWith(`${email} `))
      } catch {
        return undefined
      }
    })()
    if (line !== undefined) return line.split(" ")[1] ?? ""
    await new Promise((resolve) => setTimeout(resolve, 50))
  }
  throw new Error(`no token for ${email}`)
}

afterEach(killAll)

describe("portcullis serve --config", () => {
  for (const extension of ["mjs", "ts"] as const) {
    it(`loads a .${extension} deployment whose handler receives the verification token`, async () => {
      const dir = folder()
      const outbox = join(dir, "outbox.txt")
      const module = join(dir, `deployment.${extension}`)
      writeFileSync(module, moduleSource(outbox, extension === "ts"))
      const server = await startServer(
        { ...reached, SERVICE_DATABASE_URL: temporaryDatabase() },
        { args: ["--config", module] }
      )
      expect(server.output()).not.toContain("send_verification_email has no handler")
      expect(server.output()).toContain("send_password_reset_email has no handler")
      const email = `deploy-${extension}@example.com`
      expect(
        (await post(`${server.url}/api/v1/auth/register`, { email, password: "correct horse battery staple" })).status
      ).toBe(202)
      const token = await waitForLine(outbox, email)
      expect((await post(`${server.url}/api/v1/auth/verify-email/confirm`, { token })).status).toBe(200)
      await server.stop()
    })
  }

  it("refuses a deployment that names an unknown event, naming it, with exit 1", async () => {
    const dir = folder()
    const module = join(dir, "deployment.mjs")
    writeFileSync(module, "export default { events: { after_regster: () => {} } }\n")
    const run = await runCli(["serve", "--config", module], { ...secret, SERVICE_DATABASE_URL: temporaryDatabase() })
    expect(run.status).toBe(1)
    expect(run.stderr).toContain("events.after_regster is not an event")
  })

  it("loads a .ts deployment with a required custom field: register without it is 422, login returns it", async () => {
    const module = join(projectFolder(), "deployment.ts")
    writeFileSync(
      module,
      [
        'import { Schema } from "effect"',
        'import type { Deployment } from "../../../index.js"',
        "const deployment: Deployment = {",
        "  userFields: { display_name: Schema.Trim.pipe(Schema.minLength(1)) },",
        '  registration: { require: ["display_name"] },',
        "  customClaims: (user) => ({ name: user.display_name })",
        "}",
        "export default deployment",
        ""
      ].join("\n")
    )
    const server = await startServer(
      { ...secret, SERVICE_DATABASE_URL: temporaryDatabase() },
      { args: ["--config", module] }
    )
    const email = "fields-ts@example.com"
    const password = "correct horse battery staple"
    const missing = await post(`${server.url}/api/v1/auth/register`, { email, password })
    expect(missing.status).toBe(422)
    expect(await missing.text()).toContain("display_name")
    expect((await post(`${server.url}/api/v1/auth/register`, { email, password, display_name: "Ada" })).status).toBe(
      202
    )
    const login = await post(`${server.url}/api/v1/auth/login`, { email, password })
    expect(login.status).toBe(200)
    expect(((await login.json()) as { user: { display_name: string } }).user.display_name).toBe("Ada")
    await server.stop()
  })

  it("refuses LOGIN_FIELD naming no declared field, and a deployment leaving out auth, with exit 1", async () => {
    const dir = folder()
    const module = join(dir, "deployment.mjs")
    writeFileSync(module, "export default {}\n")
    const run = await runCli(["serve", "--config", module], {
      ...secret,
      SERVICE_DATABASE_URL: temporaryDatabase(),
      SERVICE_LOGIN_FIELD: "username"
    })
    expect(run.status).toBe(1)
    expect(run.stderr).toContain("SERVICE_LOGIN_FIELD")
    const groups = join(dir, "groups.mjs")
    writeFileSync(groups, 'export default { routeGroups: ["profile"] }\n')
    const refused = await runCli(["serve", "--config", groups], {
      ...secret,
      SERVICE_DATABASE_URL: temporaryDatabase()
    })
    expect(refused.status).toBe(1)
    expect(refused.stderr).toContain("routeGroups must include auth")
  }, 60_000)

  it("refuses a module that fails to load, with exit 1", async () => {
    const dir = folder()
    const module = join(dir, "deployment.mjs")
    writeFileSync(module, "throw new Error('boom')\n")
    const run = await runCli(["serve", "--config", module], { ...secret, SERVICE_DATABASE_URL: temporaryDatabase() })
    expect(run.status).toBe(1)
    expect(run.stderr).toContain("could not be loaded: boom")
  })

  it("warns at start-up that send-event tokens are dropped when nothing handles them", async () => {
    const server = await startServer({ ...reached, SERVICE_DATABASE_URL: temporaryDatabase() })
    expect(server.output()).toContain("send_verification_email has no handler")
    expect(server.output()).toContain("send_password_reset_email has no handler")
    await server.stop()
  })
})
