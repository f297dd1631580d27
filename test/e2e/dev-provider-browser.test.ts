import { type ChildProcess, spawn } from "node:child_process"
import { mkdirSync } from "node:fs"
import { join } from "node:path"
import { afterAll, describe, expect, it } from "vitest"
import { browserSuite, launchChromium } from "../support/browser.js"
import { cleanEnv, freePort, killAll, root, startServer, temporaryDatabase } from "../support/processes.js"

/**
 * The local provider a newcomer tries OAuth with (`npm run dev-provider`, scripts/dev-provider.ts):
 * started as the README says, its printed setting given to a server with the demo page, and
 * Chromium signs in through it from the demo page's "Sign in with local" button.
 */

const suite = browserSuite("the local OpenID provider, signed in through from the demo page (Chromium)")
const results = join(root, "test-results")
let provider: ChildProcess | undefined

afterAll(async () => {
  provider?.kill("SIGTERM")
  await killAll()
})

/** Starts the script and answers the setting it prints, once it is listening. */
const startDevProvider = (port: number, servicePort: number) =>
  new Promise<string>((resolve, reject) => {
    const child = spawn(join(root, "node_modules/.bin/tsx"), ["scripts/dev-provider.ts"], {
      cwd: root,
      env: cleanEnv({ DEV_PROVIDER_PORT: String(port), SERVICE_PORT: String(servicePort) }),
      stdio: ["ignore", "pipe", "pipe"]
    })
    provider = child
    let output = ""
    const timer = setTimeout(() => reject(new Error(`the provider printed no setting within 30 s:\n${output}`)), 30_000)
    const read = (chunk: Buffer) => {
      output += chunk.toString("utf8")
      const setting = /SERVICE_OAUTH_CUSTOM_PROVIDERS='([^']+)'/.exec(output)?.[1]
      if (setting !== undefined) {
        clearTimeout(timer)
        resolve(setting)
      }
    }
    child.stdout.on("data", read)
    child.stderr.on("data", read)
    child.once("exit", (code) => reject(new Error(`the provider exited (${code}):\n${output}`)))
    warnings = () => output.split("\n").filter((line) => /WARNING|warning/.test(line))
  })

/** The lines the provider printed that warn of something, once it has started. */
let warnings: () => ReadonlyArray<string> = () => []

describe.skipIf(suite.skip)(suite.title, () => {
  it("signs in with the provider's one user and lands on the demo page signed in", { timeout: 120_000 }, async () => {
    suite.requirePresent()
    const port = await freePort()
    const setting = await startDevProvider(await freePort(), port)
    expect(JSON.parse(setting)).toEqual([
      expect.objectContaining({ name: "local", redirect_uris: [`http://localhost:${port}/demo`] })
    ])
    // On this project's Node (20), with nothing to warn of.
    expect(warnings()).toEqual([])
    await startServer(
      {
        SERVICE_SECRET_KEY: "dev-provider-secret-key-with-32-bytes-or-more",
        SERVICE_DATABASE_URL: temporaryDatabase(),
        SERVICE_LOG_LEVEL: "warning",
        SERVICE_DEMO: "true",
        SERVICE_OAUTH_CUSTOM_PROVIDERS: setting
      },
      { port }
    )
    const browser = await launchChromium()
    try {
      const page = await browser.newPage()
      const failures: Array<string> = []
      page.on("pageerror", (error) => failures.push(error.message))
      page.on("console", (message) => {
        if (/Content Security Policy/i.test(message.text())) failures.push(message.text())
      })
      await page.goto(`http://localhost:${port}/demo`)
      await page.getByRole("button", { name: "Sign in with local" }).click()

      // The provider's own pages: its login form, then the consent to what the client asks for.
      await page.waitForURL(/127\.0\.0\.1:\d+\/interaction\//)
      await page.getByLabel("Email").fill("dev@example.com")
      await page.getByLabel("Password").fill("dev-password")
      await page.getByRole("button", { name: "Sign in" }).click()
      await page.getByRole("button", { name: "Allow" }).click()

      await page.waitForURL(`http://localhost:${port}/demo`)
      await expect.poll(() => page.locator("#who").textContent(), { timeout: 15_000 }).toBe("dev@example.com")
      expect(await page.locator("#status").textContent()).toBe("Signed in with local.")
      // Code and state are out of the address bar once spent.
      expect(page.url()).toBe(`http://localhost:${port}/demo`)
      mkdirSync(results, { recursive: true })
      await page.screenshot({ path: join(results, "demo-signed-in-with-provider.png"), fullPage: true })
      // Passkeys are off on this server: the demo neither offers nor reads them.
      expect(await page.locator("#passkeys-heading").isVisible()).toBe(false)
      expect(failures).toEqual([])
    } finally {
      await browser.close()
    }
  })
})
