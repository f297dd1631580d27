import { mkdtempSync } from "node:fs"
import { createServer } from "node:http"
import { type AddressInfo, createServer as createNetServer } from "node:net"
import { tmpdir } from "node:os"
import { join } from "node:path"
import * as HttpServer from "@effect/platform/HttpServer"
import { NodeHttpServer } from "@effect/platform-node"
import { Context, Effect, Either, Layer } from "effect"
import * as Logging from "../../composition/logging.js"
import { service } from "../../composition/service.js"
import type { Deployment } from "../../config/Deployment.js"
import { parseSettings, type Settings } from "../../config/Settings.js"
import * as Postgres from "./postgres.js"

/** A store an HTTP suite runs against, with the settings that go with it. */
export interface Backend {
  readonly name: string
  readonly databaseUrl: string
  readonly env?: Record<string, string>
}

/**
 * TEST_BACKENDS, when set, names the only backends the HTTP suites run against (comma-separated,
 * as in the suites' titles): `npm run test:quick` runs them on memory alone.
 */
const chosen = process.env.TEST_BACKENDS?.split(",").map((name) => name.trim())
const isChosen = (name: string) => chosen === undefined || chosen.includes(name)

/**
 * The backends every HTTP suite runs against: memory (uuid ids), and SQLite in memory with integer
 * ids; PostgreSQL too when TEST_DATABASE_URL is set (each server in a fresh schema). The memory
 * store is SQLite in memory, the same adapters over the same engine: `sqlite::memory:` with uuid
 * ids would run each suite a second time on the same code. SQLite in a file, where TokenHolders
 * reads on a connection of its own, is `backendsWithFile`.
 */
export const backends: ReadonlyArray<Backend> = [
  { name: "memory", databaseUrl: "memory:" },
  { name: "sqlite, integer ids", databaseUrl: "sqlite::memory:", env: { SERVICE_USER_ID_TYPE: "integer" } },
  ...(Postgres.noPostgres ? [] : [{ name: "postgresql", databaseUrl: Postgres.testDatabaseUrl ?? "" }])
].filter((backend) => isChosen(backend.name))

/**
 * SQLite in a file of its own (in a fresh temporary folder), where TokenHolders reads on a
 * connection of its own (infrastructure/sql/fast/): for the suites whose races and revocations must hold there too.
 */
export const sqliteFileBackend = (): Backend => ({
  name: "sqlite file",
  databaseUrl: `sqlite:${join(mkdtempSync(join(tmpdir(), "portcullis-http-")), "portcullis.db")}`
})

/** `backends` and SQLite in a file of its own (unless TEST_BACKENDS leaves it out). */
export const backendsWithFile = (): ReadonlyArray<Backend> =>
  isChosen("sqlite file") ? [...backends, sqliteFileBackend()] : backends

export const testSecretKey = "test-secret-key-with-at-least-32-bytes!"

export interface Reply {
  readonly status: number
  readonly headers: Headers
  readonly text: string
  /** The body parsed as JSON; undefined when it is empty. */
  readonly body: unknown
}

export interface RequestOptions {
  readonly json?: unknown
  /** A body sent exactly as given, with no Content-Type unless one is passed in `headers`. */
  readonly raw?: string
  readonly token?: string
  readonly headers?: Record<string, string>
}

/** A port of 127.0.0.1 free now, for a server whose PUBLIC_URL must be known before it listens. */
export const freePort = () =>
  new Promise<number>((resolve, reject) => {
    const probe = createNetServer()
    probe.once("error", reject)
    probe.listen(0, "127.0.0.1", () => {
      const { port } = probe.address() as AddressInfo
      probe.close(() => resolve(port))
    })
  })

/** A running Portcullis on a random port, its settings and a small HTTP client for it. */
export class TestApp extends Context.Tag("test/TestApp")<
  TestApp,
  {
    readonly url: string
    readonly settings: Settings
    readonly request: (method: string, path: string, options?: RequestOptions) => Effect.Effect<Reply>
  }
>() {}

export const settingsFor = (env: Record<string, string>): Settings =>
  Either.getOrThrowWith(parseSettings(env), (problems) => new Error(problems.join("\n"))).settings

const encoder = new TextEncoder()

export const request =
  (origin: string) =>
  (method: string, path: string, options: RequestOptions = {}) =>
    Effect.promise(async () => {
      const headers: Record<string, string> = { ...options.headers }
      if (options.token !== undefined) headers.authorization = `Bearer ${options.token}`
      // Bytes, not a string, so that fetch adds no Content-Type of its own.
      let body = options.raw === undefined ? undefined : encoder.encode(options.raw)
      if (options.json !== undefined) {
        body = encoder.encode(JSON.stringify(options.json))
        headers["content-type"] ??= "application/json"
      }
      const response = await fetch(origin + path, { method, headers, ...(body === undefined ? {} : { body }) })
      const text = await response.text()
      let parsed: unknown
      try {
        parsed = text === "" ? undefined : JSON.parse(text)
      } catch {
        parsed = undefined
      }
      return { status: response.status, headers: response.headers, text, body: parsed }
    })

/** What a suite changes in the harness's service: its code, and adapters replacing the settings' own. */
export interface Variation<A, E, R = never> {
  readonly deployment?: Deployment
  /**
   * Adapters replacing some of the settings' (a failing store): the use cases and the HTTP layer
   * see them. They are built over the settings' adapters, so a double may wrap a store's own
   * adapter on its SqlClient.
   */
  readonly overrides?: Layer.Layer<A, E, R>
  /** Listen on this port rather than a random one (a suite whose PUBLIC_URL must name the server). */
  readonly port?: number
}

/**
 * A running service for `settings` on a random port of 127.0.0.1, with a client for it; the use
 * cases and ports are exposed too, so a test can arrange what HTTP cannot. Logging is the
 * caller's.
 */
export const serve = <A = never, E = never, R = never>(
  settings: Settings,
  { deployment = {}, overrides, port = 0 }: Variation<A, E, R> = {}
) => {
  const Server = NodeHttpServer.layer(createServer, { host: "127.0.0.1", port })
  const Client = Layer.effect(
    TestApp,
    Effect.map(HttpServer.HttpServer, (server) => {
      const address = server.address as HttpServer.TcpAddress
      const url = `http://127.0.0.1:${address.port}`
      return { url, settings, request: request(url) }
    })
  )
  return Layer.merge(service(settings, deployment, Server, overrides), Client.pipe(Layer.provide(Server)))
}

/**
 * The whole service in process (a backend's settings under the suite's `env`): real HTTP on
 * 127.0.0.1, real argon2 and JWTs, the chosen backend, logs off.
 */
export const layer = <A = never, E = never, R = never>(
  backend: string | Backend,
  env: Record<string, string> = {},
  variation: Variation<A, E, R> = {}
) => {
  const { databaseUrl, env: backendEnv } = typeof backend === "string" ? { databaseUrl: backend, env: {} } : backend
  if (/^postgres(ql)?:/.test(databaseUrl)) {
    return Layer.unwrapScoped(
      Effect.map(Postgres.freshSchemaUrl, ({ url }) => quietService(url, { ...backendEnv, ...env }, variation))
    )
  }
  return quietService(databaseUrl, { ...backendEnv, ...env }, variation)
}

const quietService = <A, E, R>(databaseUrl: string, env: Record<string, string>, variation: Variation<A, E, R>) => {
  const settings = settingsFor({
    SERVICE_SECRET_KEY: testSecretKey,
    SERVICE_DATABASE_URL: databaseUrl,
    SERVICE_LOG_LEVEL: "none",
    // Suites share one server and sign in many times from 127.0.0.1; rate-limit suites turn limits on.
    SERVICE_AUTH_RATE_LIMIT_ENABLED: "false",
    ...env
  })
  return serve(settings, variation).pipe(Layer.provide(Logging.layer(settings.logging)))
}
