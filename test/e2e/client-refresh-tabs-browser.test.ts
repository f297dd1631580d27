import { mkdtempSync, readFileSync, writeFileSync } from "node:fs"
import { rm } from "node:fs/promises"
import { tmpdir } from "node:os"
import { join } from "node:path"
import * as esbuild from "esbuild"
import type { BrowserContext, Page } from "playwright-core"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { browserSuite, launchChromium } from "../support/browser.js"
import { runCli, runProcess } from "../support/cliRun.js"
import { cleanEnv, freePort, killAll, root, startServer, temporaryDatabase } from "../support/processes.js"

/**
 * Two tabs of one app refreshing at once, in Chromium, through the bundled @portcullis/client
 * in cookie mode: the refresh cookie is shared by the tabs, so without coordination both would
 * send it and the second would be taken for theft (reuse detection ends the session). With Web
 * Locks they take turns, and the session lives on. The same race with Web Locks taken away
 * shows that it is the lock, not luck, that keeps it alive.
 *
 * The app is the package as built for publishing (packages/client/build.mjs), bundled with
 * Effect for the browser as an app's bundler would, and served on the service's own origin.
 */

const suite = browserSuite("racing tabs refresh one cookie session through @portcullis/client (Chromium)")
const secretKey = "client-tabs-secret-key-with-32-bytes-or-more"
const password = "correct horse battery staple"
let scratch = ""
let bundle = ""

beforeAll(async () => {
  if (suite.skip) return
  scratch = mkdtempSync(join(tmpdir(), "portcullis-client-tabs-"))
  const built = await runProcess(
    process.execPath,
    [join(root, "packages/client/build.mjs"), "--outdir", join(scratch, "client"), "--no-types"],
    { env: cleanEnv({}), timeout: 60_000 }
  )
  expect(built.stderr).toBe("")
  writeFileSync(
    join(scratch, "app.js"),
    `import { createClient } from "./client/index.js"
globalThis.client = createClient({ baseUrl: location.origin, shape: { tokenTransport: "cookie" } })`
  )
  await esbuild.build({
    entryPoints: [join(scratch, "app.js")],
    outfile: join(scratch, "bundle.js"),
    bundle: true,
    format: "esm",
    platform: "browser",
    nodePaths: [join(root, "node_modules")],
    logLevel: "warning"
  })
  bundle = readFileSync(join(scratch, "bundle.js"), "utf8")
}, 120_000)

afterAll(async () => {
  await killAll()
  if (scratch !== "") await rm(scratch, { recursive: true, force: true })
})

/** The app's page, served on the service's origin so that the page and the API share cookies. */
const serveApp = async (context: BrowserContext, origin: string) => {
  await context.route(`${origin}/app/**`, (route) =>
    route.request().url().endsWith("/app/bundle.js")
      ? route.fulfill({ contentType: "text/javascript", body: bundle })
      : route.fulfill({
          contentType: "text/html",
          body: '<!doctype html><title>app</title><script type="module" src="/app/bundle.js"></script>'
        })
  )
}

const openTab = async (context: BrowserContext, origin: string) => {
  const page = await context.newPage()
  await page.goto(`${origin}/app/`)
  await page.waitForFunction(() => "client" in globalThis)
  return page
}

interface Outcome {
  readonly status: number
  readonly accessToken?: string
}

/** Both tabs call client.refresh() at one instant (a shared wall-clock time, not one after the other). */
const raceRefresh = (tabs: ReadonlyArray<Page>) => {
  const at = Date.now() + 500
  return Promise.all(
    tabs.map((tab) =>
      tab.evaluate(async (start): Promise<Outcome> => {
        await new Promise((resolve) => setTimeout(resolve, start - Date.now()))
        // biome-ignore lint/suspicious/noExplicitAny: the bundle's global, untyped in the page
        const client = (globalThis as any).client
        try {
          const pair = await client.refresh()
          return { status: 200, accessToken: pair.access_token }
        } catch (error) {
          return { status: (error as { status: number }).status }
        }
      }, at)
    )
  )
}

const reuseEvents = async (database: string) => {
  const run = await runCli(["audit", "--type", "refresh.reuse_detected"], {
    SERVICE_DATABASE_URL: database,
    SERVICE_SECRET_KEY: secretKey
  })
  expect(run.status, run.stderr).toBe(0)
  return (JSON.parse(run.stdout) as { events: ReadonlyArray<unknown> }).events.length
}

/** A signed-in cookie session shared by two tabs of one browser, and what the service then holds. */
const twoTabs = async (options: { readonly withoutWebLocks: boolean }) => {
  const port = await freePort()
  const origin = `http://localhost:${port}`
  const database = temporaryDatabase()
  const server = await startServer(
    {
      SERVICE_SECRET_KEY: secretKey,
      SERVICE_DATABASE_URL: database,
      SERVICE_LOG_LEVEL: "warning",
      SERVICE_PUBLIC_URL: origin,
      SERVICE_TOKEN_TRANSPORT: "cookie",
      SERVICE_COOKIE_SECURE: "false"
    },
    { port }
  )
  const browser = await launchChromium()
  const context = await browser.newContext()
  if (options.withoutWebLocks) {
    await context.addInitScript(() => Object.defineProperty(Navigator.prototype, "locks", { get: () => undefined }))
  }
  await serveApp(context, origin)
  const first = await openTab(context, origin)
  const second = await openTab(context, origin)
  const email = `tabs-${Date.now()}@example.com`
  const login = await first.evaluate(
    async ({ email, password }) => {
      // biome-ignore lint/suspicious/noExplicitAny: the bundle's global, untyped in the page
      const client = (globalThis as any).client
      await client.auth.register({ payload: { email, password } })
      const session = await client.auth.login({ payload: { email, password } })
      return { refreshToken: session.refresh_token, webLocks: typeof navigator.locks?.request === "function" }
    },
    { email, password }
  )
  const close = async () => {
    await browser.close()
    await server.stop()
  }
  return { first, second, login, database, close }
}

describe.skipIf(suite.skip)(suite.title, () => {
  it("take turns under a Web Lock: both refreshes succeed, one session lives, no reuse is detected", {
    timeout: 120_000
  }, async () => {
    suite.requirePresent()
    const { first, second, login, database, close } = await twoTabs({ withoutWebLocks: false })
    try {
      // Cookie mode: the refresh token never reaches the page.
      expect(login).toEqual({ refreshToken: null, webLocks: true })
      const outcomes = await raceRefresh([first, second])
      expect(outcomes.map((outcome) => outcome.status)).toEqual([200, 200])
      expect(outcomes[0]?.accessToken).not.toBe(outcomes[1]?.accessToken)

      const sessions = await second.evaluate(async () => {
        // biome-ignore lint/suspicious/noExplicitAny: the bundle's global, untyped in the page
        const list = await (globalThis as any).client.sessions.list()
        return list.length
      })
      expect(sessions).toBe(1)
      // The session is still good for another turn of either tab.
      expect((await raceRefresh([first])).map((outcome) => outcome.status)).toEqual([200])
      expect(await reuseEvents(database)).toBe(0)
    } finally {
      await close()
    }
  })

  it("without Web Locks the tabs race: one spends the cookie the other sends again, and the session ends", {
    timeout: 120_000
  }, async () => {
    suite.requirePresent()
    const { first, second, login, database, close } = await twoTabs({ withoutWebLocks: true })
    try {
      expect(login).toEqual({ refreshToken: null, webLocks: false })
      const outcomes = await raceRefresh([first, second])
      expect(outcomes.map((outcome) => outcome.status).sort()).toEqual([200, 401])
      expect(await reuseEvents(database)).toBe(1)
    } finally {
      await close()
    }
  })
})
