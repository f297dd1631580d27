import { execFileSync } from "node:child_process"
import { randomBytes } from "node:crypto"
import { Webhook } from "standardwebhooks"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { scratchDatabase } from "../support/postgres.js"
import { freePort, killAll, type RunningServer, startServer, temporaryDatabase } from "../support/processes.js"
import { startWebhookReceiver } from "../support/webhookReceiver.js"

/**
 * Webhooks across crashes (docs/operating.md, "Webhooks"): `portcullis serve` killed with SIGKILL, its
 * workers with it, while registrations commit and their after_register messages are delivered,
 * then started again on the same database. Every registration that committed is told to the
 * receiver, none that did not (a refused second registration of an address), each by one
 * message; a message reaches the receiver twice only after a failed try (the receiver answered
 * 500, or a deliverer died between sending and recording it).
 */

const kills = 3
const password = "webhooks survive a crash"
const secret = `whsec_${randomBytes(32).toString("base64")}`

interface Delivery {
  readonly id: string
  readonly email: string
  readonly at: number
}

/** A receiver that verifies every message and answers 500 to the first try of every fifth one. */
const receiver = async () => {
  const deliveries: Array<Delivery> = []
  const failedOnce = new Set<string>()
  let seen = 0
  const hooks = await startWebhookReceiver({
    answer: ({ headers, body }) => {
      const payload = new Webhook(secret).verify(body, headers as Record<string, string>) as {
        readonly data: { readonly user: { readonly email: string } }
      }
      const id = String(headers["webhook-id"])
      if (!failedOnce.has(id) && ++seen % 5 === 0) {
        failedOnce.add(id)
        return 500
      }
      deliveries.push({ id, email: payload.data.user.email, at: Date.now() })
      return 204
    }
  })
  return { hooks, deliveries, failedOnce }
}

type Outcome = "acknowledged" | "refused" | "in doubt"

/** Registrations of fresh addresses, and now and then one of an address already taken, until stopped. */
const registering = (base: string, attempts: Map<string, Outcome>, label: string) => {
  let stopped = false
  const loop = (async () => {
    for (let n = 0; !stopped; n++) {
      const taken = [...attempts].find(([, outcome]) => outcome === "acknowledged")
      const again = n % 4 === 3 && taken !== undefined
      const email = again ? taken[0] : `hook-${label}-${n}-${randomBytes(3).toString("hex")}@example.com`
      let outcome: Outcome
      try {
        const reply = await fetch(`${base}/api/v1/auth/register`, {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: JSON.stringify({ email, password })
        })
        outcome = reply.status === 201 ? "acknowledged" : "refused"
      } catch {
        outcome = "in doubt"
      }
      if (!again) attempts.set(email, outcome)
      else if (outcome !== "refused" && outcome !== "in doubt") attempts.set(`${email} (again)`, outcome)
    }
  })()
  return {
    stop: async () => {
      stopped = true
      await loop
    }
  }
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

/** SIGKILL for the service and every worker it forked. */
const killHard = (server: RunningServer) => {
  const pid = server.child.pid
  if (pid !== undefined) {
    try {
      execFileSync("pkill", ["-KILL", "-P", String(pid)])
    } catch {
      // No worker: one process serves.
    }
  }
  server.child.kill("SIGKILL")
}

const crashedWhileDelivering = async (vars: Record<string, string>) => {
  const { hooks, deliveries, failedOnce } = await receiver()
  const url = `${hooks.base}/hooks`
  const port = await freePort()
  const settings = {
    SERVICE_SECRET_KEY: "webhooks-sigkill-secret-key-of-32-bytes!!",
    SERVICE_PREVENT_REGISTRATION_ENUMERATION: "false",
    SERVICE_SEND_VERIFICATION_ON_REGISTER: "false",
    SERVICE_AUTH_RATE_LIMIT_ENABLED: "false",
    SERVICE_LOG_LEVEL: "error",
    SERVICE_WEBHOOKS: JSON.stringify([{ url, secret, events: ["after_register"] }]),
    SERVICE_WEBHOOKS_ALLOW_PRIVATE: "true",
    ...vars
  }
  const base = `http://127.0.0.1:${port}`
  const attempts = new Map<string, Outcome>()
  const killsAt: Array<number> = []
  let server = await startServer(settings, { port })
  for (let round = 0; round < kills; round++) {
    const loops = Array.from({ length: 3 }, (_, index) => registering(base, attempts, `${round}-${index}`))
    await sleep(1_500 + Math.random() * 1_500)
    killsAt.push(Date.now())
    killHard(server)
    await Promise.all(loops.map((loop) => loop.stop()))
    server = await startServer(settings, { port })
  }

  // Whether each address is registered now, whatever its request was told.
  const registered = async (email: string) => {
    const reply = await fetch(`${base}/api/v1/auth/login`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ email, password })
    })
    return reply.status === 200
  }
  const expected = new Set<string>()
  for (const [email, outcome] of attempts) {
    if (email.endsWith(" (again)")) continue
    if (outcome === "acknowledged" || (outcome === "in doubt" && (await registered(email)))) expected.add(email)
  }
  // Claims of the killed processes end with their lease; failed tries wait for their next.
  const delivered = () => new Set(deliveries.map((delivery) => delivery.email))
  for (let waited = 0; waited < 90_000 && [...expected].some((email) => !delivered().has(email)); waited += 500)
    await sleep(500)
  await sleep(2_000)
  await server.stop()
  await hooks.close()

  const problems: Array<string> = []
  const idsOf = new Map<string, Set<string>>()
  for (const delivery of deliveries) {
    idsOf.set(delivery.email, (idsOf.get(delivery.email) ?? new Set()).add(delivery.id))
  }
  for (const email of expected) if (!idsOf.has(email)) problems.push(`${email} committed, never told`)
  for (const [email, ids] of idsOf) {
    if (!expected.has(email)) problems.push(`${email} told, never committed`)
    if (ids.size > 1) problems.push(`${email} told by ${ids.size} messages`)
  }
  for (const [email, outcome] of attempts) {
    if (email.endsWith(" (again)")) problems.push(`${email} registered twice (${outcome})`)
  }
  // A message received twice must have failed a try first: a 500, or a deliverer killed around it.
  const copies = new Map<string, Array<number>>()
  for (const delivery of deliveries) copies.set(delivery.id, [...(copies.get(delivery.id) ?? []), delivery.at])
  for (const [id, times] of copies) {
    const first = times[0] ?? 0
    const aroundKill = killsAt.some((at) => Math.abs(at - first) < 5_000)
    if (times.length > 1 && !failedOnce.has(id) && !aroundKill) problems.push(`${id} delivered ${times.length} times`)
  }
  return { problems, committed: expected.size, deliveries: deliveries.length, failures: failedOnce.size }
}

afterAll(async () => {
  await killAll()
})

describe("webhooks across SIGKILL", () => {
  it(`SQLite file: ${kills} kills lose no committed registration's message and send none for one refused`, async () => {
    const { problems, committed, failures } = await crashedWhileDelivering({
      SERVICE_DATABASE_URL: temporaryDatabase()
    })
    expect(problems).toEqual([])
    expect(committed).toBeGreaterThan(10)
    expect(failures).toBeGreaterThan(0)
  }, 240_000)

  const databaseUrl = process.env.TEST_DATABASE_URL
  const redisUrl = process.env.TEST_REDIS_URL
  describe.skipIf(databaseUrl === undefined || redisUrl === undefined)("PostgreSQL, two workers", () => {
    const database = scratchDatabase("portcullis_hooks")
    beforeAll(database.create)
    afterAll(database.drop)

    it(`${kills} kills of the service and its workers: each committed registration told by one message, none else`, async () => {
      const { problems, committed, failures } = await crashedWhileDelivering({
        SERVICE_DATABASE_URL: database.url,
        SERVICE_REDIS_URL: redisUrl ?? "",
        SERVICE_WORKERS: "2"
      })
      expect(problems).toEqual([])
      expect(committed).toBeGreaterThan(10)
      expect(failures).toBeGreaterThan(0)
    }, 240_000)
  })
})
