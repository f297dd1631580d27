import { execFileSync } from "node:child_process"
import { mkdtempSync, rmSync } from "node:fs"
import { get } from "node:http"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { type PrivateRedis, privateRedis } from "../support/privateRedis.js"
import { killAll, type RunningServer, startServer } from "../support/processes.js"

/*
 * WORKERS=2 (issue 42): an operator could not tell the processes' lines apart, and read each
 * start-up warning once per worker.
 */
/** A GET on a connection of its own (fetch keeps one alive, which one worker would answer every time). */
const onOwnConnection = (url: string) =>
  new Promise<number>((resolve, reject) =>
    get(url, { agent: false }, (response) => {
      response.resume()
      resolve(response.statusCode ?? 0)
    }).once("error", reject)
  )

/** Waits until `text` is in the output `times` times. */
const until = async (server: RunningServer, text: string, times = 1) => {
  const deadline = Date.now() + 20_000
  while (server.output().split(text).length - 1 < times && Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 50))
  }
}

describe("serve with WORKERS=2", () => {
  let redis: PrivateRedis
  let folder = ""
  let server: RunningServer
  let records: ReadonlyArray<Record<string, unknown>> = []

  beforeAll(async () => {
    redis = await privateRedis()
    await redis.start()
    folder = mkdtempSync(join(tmpdir(), "portcullis-workers-log-"))
    // No SECRET_KEY, no mailer and a misspelt variable: three kinds of start-up warning.
    server = await startServer({
      SERVICE_WORKERS: "2",
      SERVICE_DATABASE_URL: `sqlite:${join(folder, "portcullis.db")}`,
      SERVICE_REDIS_URL: redis.url,
      SERVICE_PROT: "9000"
    })
    // Both listening, then enough requests for node:cluster's round robin to give each some.
    await until(server, "Listening on", 2)
    for (let i = 0; i < 8; i++) expect(await onOwnConnection(`${server.url}/api/v1/auth/me`)).toBe(401)
    // A worker killed: the primary's line about it is in the same format, with its own worker.
    const workers = execFileSync("pgrep", ["-P", String(server.child.pid)], { encoding: "utf8" })
      .trim()
      .split("\n")
    process.kill(Number(workers[0]), "SIGKILL")
    await until(server, "a worker exited")
    await server.stop()
    records = server
      .output()
      .split("\n")
      .filter((line) => line.trim() !== "")
      .map((line) => {
        try {
          return JSON.parse(line) as Record<string, unknown>
        } catch {
          throw new Error(`a line not in LOG_FORMAT=json: ${line}`)
        }
      })
  }, 60_000)
  afterAll(async () => {
    await killAll()
    await redis.remove()
    rmSync(folder, { recursive: true, force: true })
  })

  it("gives every line its worker: 0 for the primary, the worker's own id for the others", () => {
    expect(records.length).toBeGreaterThan(0)
    for (const record of records) expect(record.worker, JSON.stringify(record)).toEqual(expect.any(Number))
    expect(records.find((record) => record.msg === "serving with workers")?.worker).toBe(0)
    const requests = records.filter((record) => record.msg === "http request")
    expect(requests).toHaveLength(8)
    const serving = new Set(requests.map((record) => record.worker))
    expect([...serving].every((worker) => typeof worker === "number" && worker >= 1)).toBe(true)
    expect(serving.size).toBe(2)
    expect(records.find((record) => record.msg === "a worker exited; starting another")).toMatchObject({
      level: "warn",
      worker: 0
    })
  })

  it("prints each start-up warning once, from the primary", () => {
    const warnings = records.filter(
      (record) => record.level === "warn" && record.msg !== "a worker exited; starting another"
    )
    const said = warnings.map((record) => String(record.msg))
    expect(said).toEqual(
      expect.arrayContaining([
        expect.stringContaining("SERVICE_SECRET_KEY is not set"),
        expect.stringContaining("SERVICE_PROT is not a Portcullis setting"),
        expect.stringContaining("its tokens are generated and dropped")
      ])
    )
    expect(new Set(said).size).toBe(said.length)
    for (const warning of warnings) expect(warning.worker).toBe(0)
  })
})

describe("serve with one process", () => {
  it("leaves `worker` out: there is no other process to tell its lines from", async () => {
    try {
      const server = await startServer({ SERVICE_DATABASE_URL: "memory:", SERVICE_PROT: "9000" })
      expect(await onOwnConnection(`${server.url}/api/v1/auth/me`)).toBe(401)
      await server.stop()
      const lines = server
        .output()
        .split("\n")
        .filter((line) => line.trim() !== "")
        .map((line) => JSON.parse(line) as Record<string, unknown>)
      expect(lines.map((line) => line.msg)).toEqual(
        expect.arrayContaining(["http request", "SERVICE_PROT is not a Portcullis setting and is ignored"])
      )
      for (const line of lines) expect(line).not.toHaveProperty("worker")
    } finally {
      await killAll()
    }
  })
})
