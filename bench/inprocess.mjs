// `node bench/inprocess.mjs [route…]`: what one request costs the service's own code, measured
// in process with no socket, no HTTP parser and no load generator beside it. The service is
// composed as `serve` composes it, over an HttpServer that hands its app to this script, which
// then runs the same request through it again and again, CONCURRENCY at a time, and divides the
// process's CPU time by the requests answered. Far steadier than a wrk load on a shared machine
// (a few per cent between runs instead of ±15%), so it is the tool for telling whether a change on
// a hot path helps; `npm run bench` stays the measure of the whole.
//
// Routes: me (GET /me), refresh (POST /refresh, each token used once), healthz, login (POST
// /login, one account), register (POST /register, a new address each time), oidc-refresh (the
// OpenID Provider's refresh grant, each token used once) and oidc-code (an authorization by a
// signed-in, consenting user and its code's redemption, two requests), oidc-redeem (the
// redemption alone, each round's codes minted before its clock starts); login and register are
// bound by the password hash, which runs on other threads: for them read the main thread's CPU
// time a request (what the service adds beside the hash), or profile them (--cpu-prof). BENCH_REQUESTS
// (20000 a round) and BENCH_CONCURRENCY (50) set the load. BENCH_DIST=<dist>,<dist>… compares
// builds (this checkout's dist/ by default): each is composed in this one process, and their
// rounds (BENCH_ROUNDS, 3) alternate, so that the machine's drift falls on all of them alike; the
// median round of each is reported.
import { execFileSync } from "node:child_process"
import { createHash, generateKeyPairSync, randomBytes } from "node:crypto"
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import * as HttpApp from "@effect/platform/HttpApp"
import * as HttpServer from "@effect/platform/HttpServer"
import * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import { Effect, Either, Layer, ManagedRuntime, Runtime } from "effect"

const requests = Number(process.env.BENCH_REQUESTS ?? 20_000)
const concurrency = Number(process.env.BENCH_CONCURRENCY ?? 50)
const rounds = Number(process.env.BENCH_ROUNDS ?? 3)
const routes = process.argv.slice(2).length > 0 ? process.argv.slice(2) : ["me", "refresh", "healthz"]
const dists = (process.env.BENCH_DIST ?? new URL("../dist/", import.meta.url).pathname).split(",")

/** One build's service, composed as `serve` composes it, and what a request to each route costs it. */
const target = async (dist) => {
  const { service } = await import(join(dist, "composition/service.js"))
  const { parseSettings } = await import(join(dist, "config/Settings.js"))
  const Logging = await import(join(dist, "composition/logging.js"))
  const folder = mkdtempSync(join(tmpdir(), "portcullis-inprocess-"))
  const env = {
    SERVICE_DATABASE_URL: `sqlite:${join(folder, "portcullis.db")}`,
    SERVICE_SECRET_KEY: "bench-secret-key-with-at-least-32-bytes!",
    SERVICE_AUTH_RATE_LIMIT_ENABLED: "false",
    // The refresh chains start with one sign-in each, all at once, to one account: each attempt
    // counts until it succeeds, and the default of 5 would lock the account.
    SERVICE_MAX_LOGIN_ATTEMPTS: "1000",
    ...(routes.some((route) => route.startsWith("oidc"))
      ? {
          SERVICE_OIDC_PROVIDER_ENABLED: "true",
          SERVICE_PUBLIC_URL: "http://127.0.0.1",
          SERVICE_OIDC_PRIVATE_KEY: generateKeyPairSync("rsa", { modulusLength: 2048 })
            .privateKey.export({ format: "pem", type: "pkcs8" })
            .toString()
        }
      : {}),
    ...Object.fromEntries(Object.entries(process.env).filter(([name]) => name.startsWith("SERVICE_")))
  }
  const { settings } = Either.getOrThrowWith(parseSettings(env), (problems) => new Error(problems.join("\n")))

  /** The server's side of a request: the app `serve` built, run as the Node adapter runs it. */
  let served
  const server = Layer.succeed(
    HttpServer.HttpServer,
    HttpServer.make({
      address: { _tag: "TcpAddress", hostname: "127.0.0.1", port: 0 },
      serve: (app, middleware) =>
        Effect.map(Effect.runtime(), (runtime) => {
          const run = Runtime.runPromise(runtime)
          const handle = (request) => {
            let answer
            const handled = HttpApp.toHandled(app, (_, response) => Effect.sync(() => (answer = response)), middleware)
            return run(Effect.provideService(handled, HttpServerRequest.HttpServerRequest, request)).then(() => answer)
          }
          served = handle
        })
    })
  )
  const runtime = ManagedRuntime.make(
    service(settings, {}, server).pipe(Layer.provide(Logging.layer(settings.logging)))
  )
  await runtime.runPromise(Effect.void)

  const prefix = `http://127.0.0.1${settings.server.authPrefix}`
  const call = (method, path, { json, token, form, more = {} } = {}) => {
    const headers = { "user-agent": "bench", ...more }
    if (token !== undefined) headers.authorization = `Bearer ${token}`
    if (json !== undefined) headers["content-type"] = "application/json"
    if (form !== undefined) headers["content-type"] = "application/x-www-form-urlencoded"
    const body =
      json === undefined
        ? form === undefined
          ? undefined
          : new URLSearchParams(form).toString()
        : JSON.stringify(json)
    if (body !== undefined) headers["content-length"] = String(Buffer.byteLength(body))
    return served(HttpServerRequest.fromWeb(new Request(prefix + path, { method, headers, body })))
  }
  const bodyOf = (response) => JSON.parse(new TextDecoder().decode(response.body.body))

  const credentials = { email: "inprocess@bench.example", password: "correct horse battery staple" }
  await call("POST", "/register", { json: credentials })
  const signIn = async () => bodyOf(await call("POST", "/login", { json: credentials }))
  const { access_token } = await signIn()

  const makers = {
    me: async () => () => call("GET", "/me", { token: access_token }),
    healthz: async () => () => served(HttpServerRequest.fromWeb(new Request("http://127.0.0.1/healthz"))),
    // An account of its own: its thousands of sessions past MAX_SESSIONS_PER_USER would end the
    // session of the /me token and the refresh chains.
    login: async () => {
      const signer = { ...credentials, email: "inprocess-login@bench.example" }
      await call("POST", "/register", { json: signer })
      return () => call("POST", "/login", { json: signer })
    },
    register: async () => {
      let sequence = 0
      return () => call("POST", "/register", { json: { ...credentials, email: `new-${sequence++}@bench.example` } })
    },
    refresh: async () => {
      // A chain of refresh tokens for each of the requests in flight, each token used once.
      const chains = await Promise.all(Array.from({ length: concurrency }, async () => (await signIn()).refresh_token))
      return (lane) =>
        call("POST", "/refresh", { json: { refresh_token: chains[lane] } }).then((response) => {
          if (response.status === 200) chains[lane] = bodyOf(response).refresh_token
          return response
        })
    }
  }
  /** The provider: one client, signed in and consented once; each call starts a new authorization. */
  const provider = async () => {
    const redirect_uri = "https://app.example.com/cb"
    const added = JSON.parse(
      execFileSync(
        process.execPath,
        [join(dist, "main/cli.js"), "client", "add", "--name", "Bench", "--redirect-uri", redirect_uri],
        {
          env: { PATH: process.env.PATH ?? "", PORTCULLIS_IGNORE_DOTENV: "1", ...env }
        }
      ).toString()
    )
    const basic = `Basic ${Buffer.from(`${added.client_id}:${added.client_secret}`).toString("base64")}`
    let cookie = ""
    const keep = (response) => {
      for (const { name, value } of Object.values(response.cookies.cookies))
        cookie = `${cookie.replace(new RegExp(`(^|; )${name}=[^;]*`), "")}; ${name}=${value}`.replace(/^; /, "")
      return response
    }
    const csrf = () => /portcullis_op_csrf=([^;]+)/.exec(cookie)?.[1] ?? ""
    const authorize = async (scope) => {
      const verifier = randomBytes(32).toString("base64url")
      const query = new URLSearchParams({
        client_id: added.client_id,
        redirect_uri,
        response_type: "code",
        scope,
        code_challenge: createHash("sha256").update(verifier).digest("base64url"),
        code_challenge_method: "S256"
      })
      let at = new URL(keep(await call("GET", `/oauth2/authorize?${query}`, { more: { cookie } })).headers.location)
      const step = async (path, json) =>
        new URL(bodyOf(keep(await call("POST", path, { json, more: { cookie, "x-csrf-token": csrf() } }))).continue)
      if (at.pathname.endsWith("/sign-in"))
        at = await step("/oauth2/session", { ...credentials, request: at.searchParams.get("request") })
      if (at.pathname.endsWith("/consent"))
        at = await step("/oauth2/consent", { request: at.searchParams.get("request"), approve: true })
      return { code: at.searchParams.get("code"), verifier }
    }
    const token = (form) => call("POST", "/oauth2/token", { form, more: { authorization: basic } })
    const redeem = async (scope) => {
      const { code, verifier } = await authorize(scope)
      return token({ grant_type: "authorization_code", code, redirect_uri, code_verifier: verifier })
    }
    return { authorize, token, redeem }
  }
  makers["oidc-code"] = async () => {
    const { redeem } = await provider()
    return () => redeem("openid")
  }
  // The redemption alone, as bench:provider times it: each round's codes are minted before its clock starts.
  makers["oidc-redeem"] = async () => {
    const { authorize, token } = await provider()
    const redirect_uri = "https://app.example.com/cb"
    let minted = []
    const redeem = () => {
      const { code, verifier } = minted.pop()
      return token({ grant_type: "authorization_code", code, redirect_uri, code_verifier: verifier })
    }
    redeem.prepare = async (count) => {
      minted = []
      for (let n = 0; n < count; n++) minted.push(await authorize("openid"))
    }
    return redeem
  }
  makers["oidc-refresh"] = async () => {
    const { redeem, token } = await provider()
    const chains = []
    for (let lane = 0; lane < concurrency; lane++)
      chains.push(bodyOf(await redeem("openid offline_access")).refresh_token)
    return (lane) =>
      token({ grant_type: "refresh_token", refresh_token: chains[lane] }).then((response) => {
        if (response.status === 200) chains[lane] = bodyOf(response).refresh_token
        return response
      })
  }
  const next = {}
  for (const route of routes) next[route] = await makers[route]()
  return {
    dist,
    next,
    close: async () => {
      await runtime.dispose()
      rmSync(folder, { recursive: true, force: true })
    }
  }
}

/**
 * The CPU time of the process's main thread alone (the event loop's), from Linux's account of it:
 * the hash threads' time left out, and, unlike the event loop's busy time, none of the time it
 * waited for a core they held.
 */
const mainThreadMicros = () => {
  const fields = readFileSync(`/proc/self/task/${process.pid}/stat`, "utf8").split(") ")[1].split(" ")
  return ((Number(fields[11]) + Number(fields[12])) * 1e6) / ticksPerSecond
}
const ticksPerSecond = Number(execFileSync("getconf", ["CLK_TCK"], { encoding: "utf8" }))

/**
 * BENCH_PROFILE=<file>: a CPU profile of the timed rounds alone (not the set-up, not the minting of
 * oidc-redeem's codes), written there at the end; open it in Chrome's DevTools.
 */
const profiler = process.env.BENCH_PROFILE
  ? await (async () => {
      const { Session } = await import("node:inspector/promises")
      const session = new Session()
      session.connect()
      await session.post("Profiler.enable")
      let merged
      return {
        start: () => session.post("Profiler.start"),
        stop: async () => {
          const { profile } = await session.post("Profiler.stop")
          merged ??= profile
          if (merged !== profile) {
            // Rounds after the first are appended to it: their nodes renumbered past its own.
            const offset = Math.max(...merged.nodes.map((node) => node.id))
            for (const node of profile.nodes) {
              node.id += offset
              node.children = node.children?.map((child) => child + offset)
            }
            merged.nodes.push(...profile.nodes)
            merged.samples.push(...profile.samples.map((sample) => sample + offset))
            merged.timeDeltas.push(...profile.timeDeltas)
          }
          writeFileSync(process.env.BENCH_PROFILE, JSON.stringify(merged))
        }
      }
    })()
  : undefined

const measure = async (next, count) => {
  let sent = 0
  let failed = 0
  const worker = async (lane) => {
    while (sent < count) {
      sent++
      const response = await next(lane)
      if (response.status >= 300) failed++
    }
  }
  await next.prepare?.(count)
  await profiler?.start()
  const before = process.cpuUsage()
  const loopBefore = mainThreadMicros()
  const started = performance.now()
  await Promise.all(Array.from({ length: concurrency }, (_, lane) => worker(lane)))
  const cpu = process.cpuUsage(before)
  const loop = mainThreadMicros() - loopBefore
  await profiler?.stop()
  return {
    cpuMicros: (cpu.user + cpu.system) / count,
    loopMicros: loop / count,
    wallMicros: ((performance.now() - started) * 1000) / count,
    failed
  }
}

const targets = []
for (const dist of dists) targets.push(await target(dist))
const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]
for (const route of routes) {
  for (const { next } of targets) await measure(next[route], Math.min(2_000, requests))
  const figures = targets.map(() => [])
  for (let round = 0; round < rounds; round++) {
    for (const [index, { next }] of targets.entries()) figures[index].push(await measure(next[route], requests))
  }
  for (const [index, { dist }] of targets.entries()) {
    const cpu = median(figures[index].map((figure) => figure.cpuMicros))
    const loop = median(figures[index].map((figure) => figure.loopMicros))
    const failed = figures[index].reduce((sum, figure) => sum + figure.failed, 0)
    const each = figures[index].map((figure) => figure.cpuMicros.toFixed(0)).join(" ")
    const perSecond = 1e6 / median(figures[index].map((figure) => figure.wallMicros))
    process.stderr.write(
      `${route} ${dist}: ${cpu.toFixed(1)} µs CPU a request (rounds: ${each}), ${loop.toFixed(1)} µs of it on the main thread, ${perSecond.toFixed(0)} a second, ${failed} failed\n`
    )
  }
}
for (const { close } of targets) await close()
