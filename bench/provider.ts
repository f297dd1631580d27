// `npm run bench:provider`: the OpenID Provider's two token-endpoint paths, Portcullis beside
// oidc-provider (the certified Node provider) configured alike: PKCE required,
// client_secret_basic, refresh tokens rotated at every use, an RS256 JWT access token beside the
// ID token. Each runs in a process of its own; this one only drives them.
//
// - code: redeeming authorization codes (minted beforehand through each provider's own flow,
//   untimed), BENCH_CONCURRENCY (10) at a time;
// - refresh: BENCH_CONCURRENCY chains of refresh grants, each token used once.
// BENCH_CODES (400) codes (oidc-provider's memory adapter keeps
// the last 1,000 entries), BENCH_REFRESHES (40) per chain, BENCH_ROUNDS (3) alternated rounds after
// an untimed warm-up of each (BENCH_WARMUP codes, 1200, minted and redeemed BENCH_CODES at a time); the median round is reported.
//
// Durability is configured alike too: oidc-provider keeps everything in its process's memory
// (its development adapter), so Portcullis runs on a SQLite file on tmpfs (/dev/shm: nothing
// outlives the machine, and a commit's sync costs nothing), the like-for-like comparison and the
// ratios reported; and, beside them, on a SQLite file on disk committing with synchronous=FULL,
// as it is deployed (`durable`). BENCH_DATABASE_URL replaces the durable target's database.
// Beside them, the lean Effect token endpoint (bench/targets/effect-token-reference.mjs, on tmpfs):
// what Effect 3's HttpApi and @effect/sql allow for the same work, with nothing of Portcullis's.
// Writes bench/results/provider-<date>.json.
import { execFileSync, spawn } from "node:child_process"
import { generateKeyPairSync } from "node:crypto"
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import * as oidc from "openid-client"
import { hostedBrowser } from "../test/support/hostedBrowser.js"
import { CookieJar, authorize as throughOidcProvider } from "../test/support/OidcProvider.js"
import { cli, freePort, killAll, root, startServer, temporaryDatabase } from "../test/support/processes.js"

const codes = Number(process.env.BENCH_CODES ?? 400)
const refreshes = Number(process.env.BENCH_REFRESHES ?? 40)
const concurrency = Number(process.env.BENCH_CONCURRENCY ?? 10)
const rounds = Number(process.env.BENCH_ROUNDS ?? 3)
const redirectUri = "https://app.example.com/cb"
const password = "correct horse battery staple"

interface Target {
  readonly name: string
  readonly config: oidc.Configuration
  /** A code for a new authorization of `scope`, and its verifier. */
  readonly mint: (scope: string) => Promise<{ readonly code: URL; readonly verifier: string }>
  readonly stop: () => Promise<void> | void
  /** The serving process, whose CPU time a phase reads. */
  readonly pid: number
}

const pkce = async (config: oidc.Configuration, scope: string, extra: Record<string, string> = {}) => {
  const verifier = oidc.randomPKCECodeVerifier()
  const url = oidc.buildAuthorizationUrl(config, {
    redirect_uri: redirectUri,
    scope,
    code_challenge: await oidc.calculatePKCECodeChallenge(verifier),
    code_challenge_method: "S256",
    ...extra
  })
  return { url, verifier }
}

/** BENCH_PROFILE=<dir>: each target writes a CPU profile of each timed phase there. */
const profiling = (name: string): Record<string, string> =>
  process.env.BENCH_PROFILE
    ? {
        NODE_OPTIONS: `--import ${join(root, "bench/cpu-profile.mjs")}`,
        BENCH_PROFILE_DIR: join(process.env.BENCH_PROFILE, name)
      }
    : {}

const configOf = (issuer: string, id: string, secret: string) =>
  oidc.discovery(new URL(issuer), id, { client_secret: secret }, oidc.ClientSecretBasic(secret), {
    execute: [oidc.allowInsecureRequests]
  })

const portcullis = async (name: string, database: string): Promise<Target> => {
  const port = await freePort()
  const base = `http://127.0.0.1:${port}`
  const vars = {
    SERVICE_SECRET_KEY: "provider-bench-secret-key-of-32-bytes-or-more",
    SERVICE_DATABASE_URL: database,
    SERVICE_PUBLIC_URL: base,
    SERVICE_LOG_LEVEL: "warning",
    SERVICE_AUTH_RATE_LIMIT_ENABLED: "false",
    SERVICE_OIDC_PROVIDER_ENABLED: "true",
    ...profiling(name),
    SERVICE_OIDC_PRIVATE_KEY: generateKeyPairSync("rsa", { modulusLength: 2048 })
      .privateKey.export({ format: "pem", type: "pkcs8" })
      .toString()
  }
  const server = await startServer(vars, { port })
  const added = JSON.parse(
    execFileSync(process.execPath, [cli, "client", "add", "--name", "Bench", "--redirect-uri", redirectUri], {
      cwd: root,
      env: { PATH: process.env.PATH ?? "", PORTCULLIS_IGNORE_DOTENV: "1", ...vars }
    }).toString()
  ) as { client_id: string; client_secret: string }
  const email = "bench@example.com"
  await fetch(`${base}/api/v1/auth/register`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ email, password })
  })
  const config = await configOf(base, added.client_id, added.client_secret)
  const browser = hostedBrowser(`${base}/api/v1/auth`, { email, password })
  /** Follows an authorization, signing in and consenting the first time. */
  const mint = async (scope: string) => {
    const { url, verifier } = await pkce(config, scope)
    const at = await browser.authorize(url)
    return { code: at, verifier }
  }
  return { name, config, mint, stop: server.stop, pid: server.child.pid ?? 0 }
}

/** A reference server of bench/targets/, in a process of its own: it prints its issuer once it listens. */
const spawnIssuer = async (name: string, args: ReadonlyArray<string>, env: Record<string, string> = {}) => {
  const child = spawn(process.execPath, args, {
    cwd: root,
    env: { ...process.env, ...env, ...profiling(name) },
    stdio: ["ignore", "pipe", "inherit"]
  })
  const issuer = await new Promise<string>((resolve, reject) => {
    child.stdout.once("data", (chunk: Buffer) => resolve(chunk.toString().trim()))
    child.once("exit", () => reject(new Error(`${name} did not start`)))
  })
  return { child, issuer }
}

const reference = async (): Promise<Target> => {
  const { child, issuer } = await spawnIssuer("oidc-provider", [
    "--import",
    "tsx",
    join(root, "bench/targets/oidc-provider.ts")
  ])
  const config = await configOf(issuer, "bench", "bench-client-secret")
  const jar = new CookieJar()
  const mint = async (scope: string) => {
    // offline_access is granted only with a consent asked for (OIDC Core §11).
    const { url, verifier } = await pkce(config, scope, scope.includes("offline_access") ? { prompt: "consent" } : {})
    const { callback } = await throughOidcProvider(jar, url.href, redirectUri, { login: "bench", password })
    return { code: callback, verifier }
  }
  return { name: "oidc-provider", config, mint, stop: () => void child.kill(), pid: child.pid ?? 0 }
}

/**
 * The lean Effect token endpoint (bench/targets/effect-token-reference.mjs): Effect 3's HttpApi and
 * @effect/sql doing the token endpoint's work with nothing of Portcullis in it, on a SQLite file
 * like Portcullis's; its codes stored through an untimed route of its own.
 */
const leanEffect = async (database: string): Promise<Target> => {
  const { child, issuer } = await spawnIssuer("lean Effect", [join(root, "bench/targets/effect-token-reference.mjs")], {
    PORT: String(await freePort()),
    REFERENCE_DB: database
  })
  const config = await configOf(issuer, "bench", "bench-client-secret")
  const mint = async (scope: string) => {
    const { url, verifier } = await pkce(config, scope)
    const response = await fetch(`${issuer}/mint`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ scope, code_challenge: url.searchParams.get("code_challenge"), redirect_uri: redirectUri })
    })
    const { code } = (await response.json()) as { code: string }
    return { code: new URL(`${redirectUri}?code=${code}`), verifier }
  }
  return { name: "lean Effect", config, mint, stop: () => void child.kill(), pid: child.pid ?? 0 }
}

/** Both sign the same: an RS256 JWT access token beside the ID token (a bench of unlike work would say nothing). */
const signedLikeTheOther = (target: Target, accessToken: string) => {
  const header = JSON.parse(Buffer.from(accessToken.split(".")[0] ?? "", "base64url").toString() || "{}") as {
    alg?: string
  }
  if (accessToken.split(".").length !== 3 || header.alg !== "RS256")
    throw new Error(`${target.name} answered an access token that is not an RS256 JWT`)
}

/** The CPU time a process has used, in µs (Linux's /proc; user and system). */
const cpuOf = (pid: number) => {
  const fields = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]?.split(" ") ?? []
  return ((Number(fields[11]) + Number(fields[12])) * 1_000_000) / 100
}

interface Phase {
  readonly perSecond: number
  /** The server's CPU time per request, in µs. */
  readonly cpu: number
}

/** Times `run` (which makes `requests` requests), reading the target's CPU time around it. */
const phase = async (target: Target, requests: number, run: () => Promise<void>): Promise<Phase> => {
  const toggleProfile = () => process.env.BENCH_PROFILE && process.kill(target.pid, "SIGUSR2")
  toggleProfile()
  const cpu = cpuOf(target.pid)
  const started = performance.now()
  await run()
  const elapsed = performance.now() - started
  const used = cpuOf(target.pid) - cpu
  toggleProfile()
  return { perSecond: Math.round((requests / elapsed) * 1000), cpu: Math.round(used / requests) }
}

/** Runs `work` over `items`, `concurrency` at a time. */
const spread = async <A>(items: ReadonlyArray<A>, work: (item: A) => Promise<void>) => {
  let next = 0
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < items.length) await work(items[next++] as A)
    })
  )
}

const codeRound = async (target: Target, count = codes) => {
  const minted = []
  for (let n = 0; n < count; n++) minted.push(await target.mint("openid"))
  return phase(target, minted.length, () =>
    spread(minted, async ({ code, verifier }) => {
      const tokens = await oidc.authorizationCodeGrant(target.config, code, {
        pkceCodeVerifier: verifier,
        idTokenExpected: true
      })
      signedLikeTheOther(target, tokens.access_token)
    })
  )
}

const refreshRound = async (target: Target, perChain = refreshes) => {
  const chains = []
  for (let n = 0; n < concurrency; n++) {
    const { code, verifier } = await target.mint("openid offline_access")
    const tokens = await oidc.authorizationCodeGrant(target.config, code, { pkceCodeVerifier: verifier })
    chains.push(tokens.refresh_token ?? "")
  }
  // Each chain is one worker's: a token is used once, by the one request that holds it.
  return phase(target, chains.length * perChain, async () => {
    await Promise.all(
      chains.map(async (first) => {
        let token = first
        for (let n = 0; n < perChain; n++) {
          const tokens = await oidc.refreshTokenGrant(target.config, token)
          signedLikeTheOther(target, tokens.access_token)
          token = tokens.refresh_token ?? ""
        }
      })
    )
  })
}

const median = (values: ReadonlyArray<number>) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] ?? 0
const medianOf = (phases: ReadonlyArray<Phase>) => ({
  perSecond: median(phases.map((one) => one.perSecond)),
  cpu: median(phases.map((one) => one.cpu))
})

const warmup = Number(process.env.BENCH_WARMUP ?? 1200)
const inMemory = mkdtempSync(join(existsSync("/dev/shm") ? "/dev/shm" : tmpdir(), "portcullis-bench-"))
const targets = [
  await portcullis("portcullis", `sqlite:${join(inMemory, "portcullis.db")}`),
  await portcullis("portcullis durable", process.env.BENCH_DATABASE_URL || temporaryDatabase()),
  await leanEffect(join(inMemory, "lean-effect.db")),
  await reference()
]
const results: Record<string, { code: Array<Phase>; refresh: Array<Phase> }> = {}
// Untimed: each process's code is compiled and its caches filled before any round counts.
for (const target of targets) {
  for (let done = 0; done < warmup; done += codes) {
    await codeRound(target, Math.min(codes, warmup - done))
    await refreshRound(target, Math.ceil(Math.min(codes, warmup - done) / concurrency))
  }
}
try {
  for (let round = 0; round < rounds; round++) {
    // Alternated: each round in the other order, so that the machine's drift falls on both alike.
    for (const target of round % 2 === 0 ? targets : [...targets].reverse()) {
      const entry = results[target.name] ?? { code: [], refresh: [] }
      results[target.name] = entry
      entry.code.push(await codeRound(target))
      entry.refresh.push(await refreshRound(target))
      const [code, refresh] = [entry.code.at(-1), entry.refresh.at(-1)]
      console.log(
        `round ${round + 1} ${target.name}: code ${code?.perSecond}/s (${code?.cpu} µs CPU each), refresh ${refresh?.perSecond}/s (${refresh?.cpu} µs)`
      )
    }
  }
} finally {
  for (const target of targets) await target.stop()
  await killAll()
  rmSync(inMemory, { recursive: true, force: true })
}
const summary = Object.fromEntries(
  Object.entries(results).map(([name, { code, refresh }]) => [
    name,
    { code: medianOf(code), refresh: medianOf(refresh), rounds: { code, refresh } }
  ])
)
/** A target's answers a second over oidc-provider's (the median rounds). */
const ratio = (name: string, kind: "code" | "refresh") =>
  Math.round(((summary[name]?.[kind].perSecond ?? 0) / (summary["oidc-provider"]?.[kind].perSecond ?? 1)) * 100) / 100
const report = {
  date: new Date().toISOString(),
  codes,
  refreshes,
  concurrency,
  rounds,
  summary,
  // Like for like (both in memory), and Portcullis durable beside oidc-provider in memory.
  ratios: { code: ratio("portcullis", "code"), refresh: ratio("portcullis", "refresh") },
  durableRatios: { code: ratio("portcullis durable", "code"), refresh: ratio("portcullis durable", "refresh") },
  // What Effect 3's HttpApi and @effect/sql allow for the same work, with nothing of Portcullis's.
  leanEffectRatios: { code: ratio("lean Effect", "code"), refresh: ratio("lean Effect", "refresh") }
}
console.log(JSON.stringify(report, null, 2))
mkdirSync(join(root, "bench/results"), { recursive: true })
writeFileSync(
  join(root, `bench/results/provider-${report.date.slice(0, 10)}.json`),
  `${JSON.stringify(report, null, 2)}\n`
)
