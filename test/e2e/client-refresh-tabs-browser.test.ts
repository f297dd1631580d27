import { mkdtempSync, readFileSync, writeFileSync } from "node:fs"
import { rm } from "node:fs/promises"
import { createServer } from "node:http"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { gzipSync } from "node:zlib"
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
 * shows that it is the lock, not luck, that keeps both tabs signed in. A page on another origin
 * of the site keeps its cookies only because the client includes credentials.
 *
 * The app is the package as built for publishing (packages/client/build.mjs), bundled with
 * Effect for the browser as an app's bundler would, and served on the service's own origin.
 */

const suite = browserSuite(
  "@portcullis/client bundled into a page (Chromium): racing tabs, cookie mode, another origin"
)
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
// The service's origin and fetch's credentials may be named in the page's address.
const asked = new URLSearchParams(location.search)
globalThis.client = createClient({
  baseUrl: asked.get("api") ?? location.origin,
  shape: { tokenTransport: "cookie" },
  ...(asked.has("credentials") ? { credentials: asked.get("credentials") } : {})
})`
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

/** The app's bundle as it would ship: minified for the browser, with what esbuild put in it. */
const shippedBundle = async () => {
  const built = await esbuild.build({
    entryPoints: [join(scratch, "app.js")],
    bundle: true,
    format: "esm",
    platform: "browser",
    minify: true,
    write: false,
    metafile: true,
    nodePaths: [join(root, "node_modules")],
    logLevel: "warning"
  })
  const [output] = built.outputFiles
  if (output === undefined) throw new Error("esbuild wrote no bundle")
  return { bytes: output.contents, inputs: Object.keys(built.metafile.inputs) }
}

afterAll(async () => {
  await killAll()
  if (scratch !== "") await rm(scratch, { recursive: true, force: true })
})

describe.skipIf(suite.skip)("@portcullis/client in a browser bundle", () => {
  it("weighs at most 10 KB minified and gzipped, with nothing but the client's own modules in it", async () => {
    const { bytes, inputs } = await shippedBundle()
    // Every module bundled is the client's own: no package (Effect was 151 KB gzipped of 478 KB).
    expect(inputs.filter((input) => input.includes("node_modules"))).toEqual([])
    expect(inputs.some((input) => input.endsWith("client/index.js"))).toBe(true)
    expect(gzipSync(bytes).length).toBeLessThanOrEqual(10 * 1024)
  })
})

const appPage = '<!doctype html><title>app</title><script type="module" src="/app/bundle.js"></script>'

/**
 * The app's page on an origin of its own: a real server on loopback, since Chromium lets only a
 * page of the loopback address space call a loopback service (Local Network Access), and a
 * page fulfilled by Playwright has none.
 */
const appServer = async (port: number) => {
  const server = createServer((request, response) => {
    const script = request.url?.startsWith("/app/bundle.js") === true
    response.writeHead(200, { "content-type": script ? "text/javascript" : "text/html" })
    response.end(script ? bundle : appPage)
  })
  await new Promise<void>((resolve) => server.listen(port, resolve))
  return { close: () => new Promise((resolve) => server.close(resolve)) }
}

/** The app's page, served on the service's origin so that the page and the API share cookies. */
const serveApp = async (context: BrowserContext, origin: string) => {
  await context.route(`${origin}/app/**`, (route) =>
    route.request().url().endsWith("/app/bundle.js")
      ? route.fulfill({ contentType: "text/javascript", body: bundle })
      : route.fulfill({ contentType: "text/html", body: appPage })
  )
}

const openTab = async (context: BrowserContext, origin: string, search = "") => {
  const page = await context.newPage()
  await page.goto(`${origin}/app/${search}`)
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

  it("without Web Locks the tabs race, and the one that comes second is refused", { timeout: 120_000 }, async () => {
    suite.requirePresent()
    const { first, second, login, database, close } = await twoTabs({ withoutWebLocks: true })
    try {
      expect(login).toEqual({ refreshToken: null, webLocks: false })
      const [won, lost] = (await raceRefresh([first, second])).map((outcome) => outcome.status).sort()
      expect(won).toBe(200)
      // Which refusal depends on when the winner's new cookies land: the spent refresh cookie
      // sent again is reuse (401, and the session ends); the new cookie with the CSRF token read
      // before it landed is a CSRF failure (403, nothing spent, but this tab's refresh failed).
      expect([401, 403]).toContain(lost)
      expect(await reuseEvents(database)).toBe(lost === 401 ? 1 : 0)
    } finally {
      await close()
    }
  })

  it("on a page of another origin of the site (CORS_ORIGINS), keeps and sends the cookies: credentials are included", {
    timeout: 120_000
  }, async () => {
    suite.requirePresent()
    const [port, appPort] = [await freePort(), await freePort()]
    const [origin, appOrigin] = [`http://localhost:${port}`, `http://localhost:${appPort}`]
    const server = await startServer(
      {
        SERVICE_SECRET_KEY: secretKey,
        SERVICE_DATABASE_URL: temporaryDatabase(),
        SERVICE_LOG_LEVEL: "warning",
        SERVICE_PUBLIC_URL: origin,
        SERVICE_CORS_ORIGINS: appOrigin,
        SERVICE_TOKEN_TRANSPORT: "cookie",
        SERVICE_COOKIE_SECURE: "false"
      },
      { port }
    )
    const app = await appServer(appPort)
    const browser = await launchChromium()
    try {
      const context = await browser.newContext()
      const signInAndRefresh = async (search: string, email: string) => {
        const page = await openTab(context, appOrigin, search)
        return page.evaluate(
          async ({ email, password }) => {
            // biome-ignore lint/suspicious/noExplicitAny: the bundle's global, untyped in the page
            const client = (globalThis as any).client
            await client.auth.register({ payload: { email, password } })
            await client.auth.login({ payload: { email, password } })
            try {
              await client.refresh()
              return { refreshed: 200, me: (await client.profile.me()).email }
            } catch (error) {
              return { refreshed: (error as { status: number }).status, me: null }
            }
          },
          { email, password }
        )
      }
      const api = `?api=${encodeURIComponent(origin)}`
      expect(await signInAndRefresh(api, "sibling@example.com")).toEqual({ refreshed: 200, me: "sibling@example.com" })
      // With fetch's default credentials, the login's cookies are never kept: nothing to refresh with.
      await context.clearCookies()
      expect(await signInAndRefresh(`${api}&credentials=same-origin`, "same-origin@example.com")).toEqual({
        refreshed: 401,
        me: null
      })
    } finally {
      await browser.close()
      await app.close()
      await server.stop()
    }
  })
})
