import { spawnSync } from "node:child_process"
import { copyFileSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from "node:fs"
import { rm } from "node:fs/promises"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, describe, expect, it } from "vitest"
import { runProcess } from "../support/cliRun.js"
import { cleanEnv, killAll, root, startServer, temporaryDatabase } from "../support/processes.js"

/**
 * @portcullis/client as an app gets it: `npm pack` of packages/client (its prepack bundles the
 * client), the tarball installed into an empty folder, and a running service driven from there
 * through the Promise client and the Effect client, each resolved from the installed package.
 * It needs the npm registry (effect and @effect/platform come from npm's cache when there):
 * skipped when the registry does not answer, unless TEST_REQUIRE_REGISTRY=1 (.ci/run sets it).
 */

const required = process.env.TEST_REQUIRE_REGISTRY === "1"
const reachable = spawnSync("npm", ["ping"], { stdio: "ignore", timeout: 20_000 }).status === 0
const title =
  reachable || required
    ? "@portcullis/client, packed and installed into an empty project"
    : "@portcullis/client packed and installed: skipped, the npm registry does not answer (TEST_REQUIRE_REGISTRY=1 makes this a failure)"

const fixtures = join(root, "test/package/fixtures")
let scratch = ""

afterAll(async () => {
  await killAll()
  if (scratch !== "") await rm(scratch, { recursive: true, force: true })
}, 60_000)

/** Runs a command to its end in `cwd`; fails the test with its output on a non-zero exit. */
const run = async (command: string, args: ReadonlyArray<string>, cwd: string, timeout = 300_000) => {
  const result = await runProcess(command, args, { cwd, timeout, env: cleanEnv({}) })
  if (result.status !== 0) throw new Error(`${command} ${args.join(" ")} exited ${result.status}:\n${result.stderr}`)
  return result.stdout
}

/** What the app's type checker must accept, and one mistake it must refuse: the types are real, not `any`. */
const typeCheck = `import { createClient, PortcullisError, type Wire } from "@portcullis/client"
import { AuthenticationError, make, problemBody, type PublicUser } from "@portcullis/client/effect"
import type { Effect } from "effect"
import { nodeGuard, resourceServer, verifyEffect } from "@portcullis/client/resource-server"
const client = createClient({ baseUrl: "http://localhost:8000" })
const me: { readonly email: string; readonly created_at: string } = await client.profile.me()
const user: Wire<PublicUser> = me as Wire<PublicUser>
// @ts-expect-error -- the answer of /me has no such field
me.no_such_field
const pair: { readonly access_token: string; readonly refresh_token: string | null } = await client.refresh()
const [sessions, response] = await client.sessions.list({ urlParams: { limit: 10 }, withResponse: true })
const status: number = response.status
const family: string | undefined = sessions[0]?.family_id
// @ts-expect-error -- a path parameter is required
client.sessions.revoke()
const failure = new Error() as unknown
const code: string | undefined = failure instanceof PortcullisError ? failure.code : undefined
// @ts-expect-error -- a typo in the login body is refused
client.auth.login({ payload: { emial: "ada@example.com", password: "pw" } })
// @ts-expect-error -- no problem of the service has this code
if (failure instanceof PortcullisError && failure.code === "AuthenticationEror") throw failure
type EffectClient = Effect.Effect.Success<ReturnType<typeof make>>
const login: EffectClient["auth"]["login"] = null as unknown as EffectClient["auth"]["login"]
const refused: { readonly status: number; readonly detail: string } = problemBody(new AuthenticationError())
const guarded = resourceServer({ issuer: "https://auth.example.com", resource: "https://mcp.example.com/mcp" })
const metadataPath: string = guarded.metadataPath
// @ts-expect-error -- the issuer is required
resourceServer({ resource: "https://mcp.example.com/mcp" })
const verified: Effect.Effect<{ readonly sub: string }, { readonly status: 401 | 403 }> = verifyEffect(guarded, undefined)
export const checks = [user, pair, status, family, code, login, refused, metadataPath, nodeGuard, verified]
`

describe.skipIf(!reachable && !required)(title, () => {
  it("installs with effect, @effect/platform (peers) and jose only, and drives a service through both clients", {
    timeout: 600_000
  }, async () => {
    if (!reachable) throw new Error("TEST_REQUIRE_REGISTRY=1 but the npm registry does not answer (npm ping)")
    scratch = mkdtempSync(join(tmpdir(), "portcullis-client-package-"))

    const packed = JSON.parse(
      await run("npm", ["pack", "--json", "--pack-destination", scratch], join(root, "packages/client"))
    ) as ReadonlyArray<{ readonly filename: string; readonly files: ReadonlyArray<{ readonly path: string }> }>
    const [tarball] = packed
    if (tarball === undefined) throw new Error("npm pack named no tarball")
    const listed = tarball.files.map((file) => file.path)
    expect(listed).toContain("dist/index.js")
    expect(listed).toContain("dist/index.d.ts")
    expect(listed).toContain("dist/types/packages/client/src/index.d.ts")
    expect(listed).toContain("dist/effect.js")
    expect(listed).toContain("dist/effect.d.ts")
    expect(listed).toContain("dist/resource-server.js")
    expect(listed).toContain("dist/resource-server.d.ts")
    expect(listed.filter((path) => path.endsWith(".ts") && !path.endsWith(".d.ts"))).toEqual([])

    const app = join(scratch, "app")
    mkdirSync(app)
    writeFileSync(join(app, "package.json"), JSON.stringify({ name: "app", private: true, type: "module" }))
    await run("npm", ["install", "--no-audit", "--no-fund", "--prefer-offline", join(scratch, tarball.filename)], app)

    // Nothing of the server came along: none of its dependencies but the two the client shares.
    const modules = join(app, "node_modules")
    const installed = readdirSync(modules)
      .filter((entry) => !entry.startsWith("."))
      .flatMap((entry) =>
        entry.startsWith("@") ? readdirSync(join(modules, entry)).map((name) => `${entry}/${name}`) : [entry]
      )
    const server = JSON.parse(readFileSync(join(root, "package.json"), "utf8")) as {
      dependencies: Record<string, string>
    }
    const serverOnly = ["portcullis", ...Object.keys(server.dependencies)].filter(
      (name) => name !== "effect" && name !== "@effect/platform" && name !== "jose"
    )
    expect(installed).toContain("@portcullis/client")
    expect(installed).toContain("effect")
    expect(installed).toContain("@effect/platform")
    expect(installed).toContain("jose")
    expect(installed.filter((name) => serverOnly.includes(name))).toEqual([])

    // The Promise client's module loads nothing: fetch alone (the Effect client's loads its peers).
    const shipped = join(modules, "@portcullis/client/dist")
    expect(readFileSync(join(shipped, "index.js"), "utf8")).not.toMatch(/\bfrom\s*["']|\bimport\s*\(|\brequire\s*\(/)
    expect(readFileSync(join(shipped, "effect.js"), "utf8")).toMatch(/from\s*["']effect["']/)

    // The shipped declarations, checked as an app's compiler sees them.
    writeFileSync(join(app, "check.ts"), typeCheck)
    const tsc = join(root, "node_modules/typescript/bin/tsc")
    const options = ["--noEmit", "--strict", "--target", "es2022", "--module", "nodenext", "--skipLibCheck"]
    await run(process.execPath, [tsc, ...options, "--lib", "es2022,dom", "check.ts"], app, 120_000)

    // The resource-server helper from its own entry point, as an API guarded by Portcullis loads it.
    const helper = await run(
      process.execPath,
      [
        "--input-type=module",
        "-e",
        'const { resourceServer } = await import("@portcullis/client/resource-server"); console.log(resourceServer({ issuer: "https://auth.example.com", resource: "HTTPS://MCP.example.com:443/mcp/" }).metadataUrl)'
      ],
      app,
      60_000
    )
    expect(helper.trim()).toBe("https://mcp.example.com/.well-known/oauth-protected-resource/mcp")

    const service = await startServer({
      SERVICE_SECRET_KEY: "client-package-secret-key-of-32-bytes-or-more",
      SERVICE_DATABASE_URL: temporaryDatabase(),
      SERVICE_LOG_LEVEL: "warning",
      SERVICE_AUTH_RATE_LIMITS: JSON.stringify({ register: "2/minute" })
    })
    for (const script of ["promise-client.mjs", "effect-client.mjs"])
      copyFileSync(join(fixtures, script), join(app, script))

    const viaEffect = JSON.parse(await run(process.execPath, ["effect-client.mjs", service.url], app, 60_000))
    expect(viaEffect).toEqual({
      wrong: "AuthenticationError",
      wrongProblem: { status: 401, detail: "Invalid credentials." },
      email: "bob@example.com",
      createdAtIsDateTime: true,
      afterRefresh: "bob@example.com"
    })

    const seen = JSON.parse(await run(process.execPath, ["promise-client.mjs", service.url], app, 60_000))
    expect(seen.registered).toEqual({ detail: expect.any(String) })
    expect(seen.wrongPassword).toEqual({
      instance: true,
      status: 401,
      code: "AuthenticationError",
      title: "Authentication failed",
      detail: "Invalid credentials.",
      retryAfter: undefined
    })
    expect(seen.login.user.email).toBe("alice@example.com")
    expect(seen.login.refreshTokenIsString).toBe(true)
    // Dates as the JSON has them: ISO strings, not Effect DateTime values.
    expect(seen.me.created_at).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z$/)
    expect(seen.me.email).toBe("alice@example.com")
    expect(seen.refreshed).toEqual({ accessTokenChanged: true, expiresIn: 900 })
    expect(seen.meAfterRefresh).toBe("alice@example.com")
    expect(seen.sessions).toEqual({ count: 1, status: 200 })
    expect(seen.staleRefresh).toMatchObject({ instance: true, status: 401 })
    expect(seen.loginAgain).toBe("alice@example.com")
    expect(seen.heldAfterLogout).toBeNull()
    expect(seen.afterLogout).toMatchObject({ instance: true, status: 401 })
    expect(seen.limited).toMatchObject({ instance: true, status: 429, code: "RateLimitedError" })
    expect(seen.limited.retryAfter).toBeGreaterThan(0)
    await service.stop()
  })
})
