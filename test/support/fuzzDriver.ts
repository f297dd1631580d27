import { expect } from "@effect/vitest"
import { Effect, Option, Redacted } from "effect"
import { Accounts } from "../../application/Accounts.js"
import { Email } from "../../domain/User.js"
import { password } from "./flows.js"
import {
  describeAnswer,
  describeSent,
  type FuzzContext,
  type FuzzRequest,
  type Lookup,
  type OpenApiDocument,
  type Operation,
  operationsOf,
  type Rules,
  ready,
  type SlotField,
  slotsNamed,
  violations,
  vocabularyOf
} from "./fuzz.js"
import { client, sendBytes } from "./rawHttp.js"
import { TestApp, testSecretKey } from "./TestApp.js"

/** Sessions the requests may use: the last one a superuser's. */
const SLOTS = 4

interface PoolSession {
  readonly email: string
  readonly userId: string
  readonly access: string
  readonly refresh: string
  readonly family: string
  readonly csrf: string
}

const claimsOf = (token: string) =>
  JSON.parse(Buffer.from(token.split(".")[1] ?? "", "base64url").toString("utf8")) as { family_id?: string }

/**
 * Signed-in users for the requests to use, kept alive: a session a request ended (logout,
 * DELETE /me, refresh-token reuse) is replaced before the next batch, by a new sign-in or a new
 * user. Each arranging request comes from an address of its own, so that it meets no
 * rate limit.
 */
const pool = Effect.gen(function* () {
  const app = yield* TestApp
  const accounts = yield* Accounts
  const prefix = app.settings.server.authPrefix
  let addresses = 0
  const from = () => {
    addresses += 1
    return { "x-forwarded-for": `10.200.${Math.floor(addresses / 250) % 250}.${(addresses % 250) + 1}` }
  }
  const post = (path: string, json: unknown) => app.request("POST", `${prefix}${path}`, { json, headers: from() })

  /** None when the user is gone, was locked out or had its password changed by a request. */
  const signIn = (email: string) =>
    Effect.gen(function* () {
      const reply = yield* post("/login", { email, password })
      if (reply.status !== 200) return Option.none()
      const body = reply.body as { access_token: string; refresh_token: string | null; user: { id: unknown } }
      const cookies = new Map(
        reply.headers.getSetCookie().map((line) => {
          const [pair = ""] = line.split(";")
          const at = pair.indexOf("=")
          return [pair.slice(0, at), pair.slice(at + 1)] as const
        })
      )
      return Option.some({
        email,
        userId: String(body.user.id),
        access: body.access_token,
        refresh: body.refresh_token ?? cookies.get("portcullis_refresh") ?? "",
        family: claimsOf(body.access_token).family_id ?? "",
        csrf: cookies.get("portcullis_csrf") ?? ""
      })
    })

  let created = 0
  const newUser = (superuser: boolean) =>
    Effect.gen(function* () {
      created += 1
      const email = `pool-${created}-${Math.random().toString(36).slice(2, 10)}@example.com`
      if (superuser) yield* Effect.orDie(accounts.createSuperuser(Email.make(email), Redacted.make(password)))
      else expect((yield* post("/register", { email, password })).status).toBeLessThan(300)
      return Option.getOrThrow(yield* signIn(email))
    })

  const sessions: Array<PoolSession> = []
  for (let slot = 0; slot < SLOTS; slot++) sessions.push(yield* newUser(slot === SLOTS - 1))

  const lookup: Lookup = (field: SlotField, slot: number) =>
    sessions[slot]?.[field === "userid" ? "userId" : field] ?? ""
  const alive = (slot: number) =>
    Effect.map(
      app.request("GET", `${prefix}/me`, { token: sessions[slot]?.access ?? "", headers: from() }),
      (reply) => reply.status === 200
    )
  /** Replaces every session these requests named that no longer works. */
  const heal = (requests: ReadonlyArray<FuzzRequest>) =>
    Effect.gen(function* () {
      const named = new Set(requests.flatMap((request) => [...slotsNamed(request)]))
      for (const slot of named) {
        const session = sessions[slot]
        if (session === undefined || (yield* alive(slot))) continue
        // Signing the same user in again costs one hash, a new user two.
        const again = yield* signIn(session.email)
        sessions[slot] = Option.isSome(again) ? again.value : yield* newUser(slot === SLOTS - 1)
      }
    })
  return { lookup, heal }
})

/** One request's failure: what went out, what rule its answer broke, and the answer. */
export interface Failure {
  readonly request: string
  readonly violations: ReadonlyArray<string>
  readonly answer: string
}

/**
 * Fuzzing the TestApp's service: the context requests are generated from (its routes read from
 * its own OpenAPI document, plus the document and the docs page served beside it), a pool of
 * live sessions, and `run`, which sends a batch and answers what is wrong with the answers.
 */
export const fuzzDriver = (concurrency: number) =>
  Effect.gen(function* () {
    const app = yield* TestApp
    const { authPrefix, corsOrigins, publicUrl } = app.settings.server
    const spec = yield* app.request("GET", `${authPrefix}/openapi.json`)
    expect(spec.status).toBe(200)
    const document = spec.body as OpenApiDocument
    const beside: ReadonlyArray<Operation> = [`${authPrefix}/openapi.json`, `${authPrefix}/docs`].map((path) => ({
      method: "GET",
      path,
      parameters: [],
      body: undefined,
      secured: false,
      successes: [200]
    }))
    const operations = [...operationsOf(document), ...beside]
    const context: FuzzContext = {
      operations,
      schemas: document.components?.schemas ?? {},
      authPrefix,
      slots: SLOTS,
      origins: [publicUrl.origin, ...corsOrigins],
      password
    }
    const rules: Rules = {
      operations,
      corsOrigins,
      vocabulary: vocabularyOf(document),
      ...(app.settings.cookies.tokenTransport === "cookie" ? { cookieOrigins: [publicUrl.origin, ...corsOrigins] } : {})
    }
    const sessions = yield* pool
    const http = client(app.url, concurrency)
    yield* Effect.addFinalizer(() => Effect.sync(http.close))

    const check = async (request: FuzzRequest): Promise<{ failure?: Failure; status?: number }> => {
      if (request.kind === "bytes") {
        const answers = await sendBytes(app.url, Buffer.from(request.bytes, "latin1"))
        const sent = describeSent(request)
        if ("error" in answers)
          return { failure: { request: sent, violations: [`no answer: ${answers.error}`], answer: "" } }
        if (answers.length === 0) {
          return { failure: { request: sent, violations: ["the connection closed without an answer"], answer: "" } }
        }
        const head = request.bytes.startsWith("HEAD ")
        const wrong = answers.filter((answer) => violations(rules, undefined, answer, head).length > 0)
        if (wrong.length === 0) return {}
        const found = wrong.flatMap((answer) => violations(rules, undefined, answer, head))
        return { failure: { request: sent, violations: found, answer: wrong.map(describeAnswer).join("\n") } }
      }
      const sent = ready(request, sessions.lookup, testSecretKey)
      const outcome = await http.send(sent)
      if ("error" in outcome) {
        return { failure: { request: describeSent(sent), violations: [`no answer: ${outcome.error}`], answer: "" } }
      }
      const { status } = outcome.answer
      const wrong = violations(rules, sent, outcome.answer)
      if (wrong.length === 0) return { status }
      return {
        status,
        failure: { request: describeSent(sent), violations: wrong, answer: describeAnswer(outcome.answer) }
      }
    }

    /**
     * Sends a batch at once and answers its failures in order; then heals the pool's sessions
     * that a success (logout, DELETE /me, a refresh) or a refusal (a reused refresh token) may
     * have ended.
     */
    const run = async (batch: ReadonlyArray<FuzzRequest>) => {
      const results = await Promise.all(batch.map(check))
      const ending = batch.filter((_, index) => {
        const status = results[index]?.status ?? 0
        return (status >= 200 && status < 300) || status === 401
      })
      await Effect.runPromise(sessions.heal(ending))
      return results.flatMap((result) => (result.failure === undefined ? [] : [result.failure]))
    }
    return { context, run }
  })

/** Failures as a message a reader can replay from. */
export const report = (failures: ReadonlyArray<Failure>) =>
  failures
    .map(
      (failure) =>
        `${failure.request}\n→ ${failure.violations.join("\n→ ")}${failure.answer === "" ? "" : `\n${failure.answer}`}`
    )
    .join("\n\n")
