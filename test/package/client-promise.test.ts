import { afterEach, describe, expect, it } from "vitest"
import { createClient, PortcullisError } from "../../packages/client/src/index.js"
import { exclusive } from "../../packages/client/src/promise/lock.js"

/**
 * The Promise client of @portcullis/client against a fetch that records what it is asked and
 * answers as told: how requests are built, how answers and refusals come back, which tokens it
 * holds. test/package/client-package.test.ts drives the packed package against a real service.
 */

interface Sent {
  readonly method: string
  readonly url: string
  readonly headers: Headers
  readonly body: unknown
}

const json = (status: number, body: unknown, headers: Record<string, string> = {}) =>
  new Response(JSON.stringify(body), {
    status,
    headers: { "content-type": status < 400 ? "application/json" : "application/problem+json", ...headers }
  })

const pair = (n: number) => ({
  access_token: `access-${n}`,
  refresh_token: `refresh-${n}`,
  token_type: "bearer",
  expires_in: 900
})

/** A fetch that records each request and answers with `answer` (after `delayMs`). */
const recorder = (answer: (sent: Sent, count: number) => Response, delayMs = 0) => {
  const sent: Array<Sent> = []
  const fetch = async (input: RequestInfo | URL, init?: RequestInit) => {
    const request: Sent = {
      method: init?.method ?? "GET",
      url: String(input),
      headers: new Headers(init?.headers),
      body: typeof init?.body === "string" ? JSON.parse(init.body) : undefined
    }
    sent.push(request)
    const count = sent.length
    if (delayMs > 0) await new Promise((resolve) => setTimeout(resolve, delayMs))
    return answer(request, count)
  }
  return { sent, fetch: fetch as typeof globalThis.fetch }
}

const baseUrl = "https://auth.example.com/"

afterEach(() => {
  Reflect.deleteProperty(globalThis, "document")
})

describe("the Promise client", () => {
  it("builds each route's request from the API definition: method, prefix, path and query parameters", async () => {
    const { sent, fetch } = recorder(() => new Response(null, { status: 204 }))
    const client = createClient({ baseUrl, fetch, shape: { authPrefix: "/auth" } })
    await client.sessions.revoke({ path: { family_id: "a/b" } })
    await client.sessions.list({ urlParams: { limit: 5 } })
    expect(sent.map(({ method, url }) => `${method} ${url}`)).toEqual([
      "DELETE https://auth.example.com/auth/sessions/a%2Fb",
      "GET https://auth.example.com/auth/sessions?limit=5"
    ])
    expect(sent[0]?.headers.get("content-type")).toBeNull()
  })

  it("answers the JSON as sent (dates stay ISO strings) and keeps the session's tokens for the next calls", async () => {
    const user = { id: "u", email: "a@example.com", created_at: "2026-11-29T07:00:00.000Z" }
    const { sent, fetch } = recorder((request) =>
      request.url.endsWith("/login") ? json(200, { ...pair(1), user }) : json(200, user)
    )
    const client = createClient({ baseUrl, fetch })
    await client.auth.login({ payload: { email: "a@example.com", password: "pw" } })
    const me = await client.profile.me()
    expect(me).toEqual(user)
    expect(typeof me.created_at).toBe("string")
    expect(sent[0]?.body).toEqual({ email: "a@example.com", password: "pw" })
    expect(sent[0]?.headers.get("content-type")).toBe("application/json")
    expect(sent[1]?.headers.get("authorization")).toBe("Bearer access-1")
    expect(client.session.refreshToken()).toBe("refresh-1")
  })

  it("throws refusals as PortcullisError with the problem's status, code, title, detail and Retry-After", async () => {
    const problem = {
      type: "about:blank",
      title: "Too many requests",
      status: 429,
      detail: "Too many requests; retry in 42 seconds.",
      code: "RateLimitedError",
      limit: 5
    }
    const { fetch } = recorder(() => json(429, problem, { "retry-after": "42" }))
    const error = await createClient({ baseUrl, fetch })
      .auth.login({ payload: { email: "a@example.com", password: "pw" } })
      .catch((e: unknown) => e)
    expect(error).toBeInstanceOf(PortcullisError)
    expect(error).toMatchObject({
      status: 429,
      code: "RateLimitedError",
      title: "Too many requests",
      detail: problem.detail,
      retryAfter: 42,
      problem: { limit: 5 }
    })
  })

  it("still throws a PortcullisError with the status when the body is no problem", async () => {
    const { fetch } = recorder(
      () => new Response("<html>bad gateway</html>", { status: 502, statusText: "Bad Gateway" })
    )
    const error = await createClient({ baseUrl, fetch })
      .health.healthz()
      .catch((e: unknown) => e)
    expect(error).toMatchObject({ status: 502, code: "UnknownError", title: "Bad Gateway", retryAfter: undefined })
  })

  it("sends the held refresh token once for refreshes asked at once, and the new one afterwards", async () => {
    const { sent, fetch } = recorder((_, count) => json(200, pair(count + 1)), 20)
    const client = createClient({ baseUrl, fetch })
    client.session.set(pair(1))
    const [a, b] = await Promise.all([client.refresh(), client.auth.refresh()])
    expect(a).toEqual(b)
    expect(sent.map((request) => request.body)).toEqual([{ refresh_token: "refresh-1" }])
    await client.refresh()
    expect(sent.map((request) => request.body)).toEqual([
      { refresh_token: "refresh-1" },
      { refresh_token: "refresh-2" }
    ])
    expect(client.session.accessToken()).toBe("access-3")
  })

  it("forgets the session when its refresh is refused, and when it logs out", async () => {
    const { fetch } = recorder((request) =>
      request.url.endsWith("/refresh")
        ? json(401, {
            title: "Invalid token",
            status: 401,
            detail: "The token was revoked.",
            code: "TokenBlacklistedError"
          })
        : new Response(null, { status: 204 })
    )
    const client = createClient({ baseUrl, fetch })
    client.session.set(pair(1))
    await expect(client.refresh()).rejects.toMatchObject({ status: 401, code: "TokenBlacklistedError" })
    expect(client.session.accessToken()).toBeUndefined()
    client.session.set(pair(2))
    await client.auth.logout()
    expect(client.session.accessToken()).toBeUndefined()
  })

  it("in a page, echoes the CSRF cookie in X-CSRF-Token on unsafe requests, sends no body to a cookie refresh, and includes credentials", async () => {
    Reflect.set(globalThis, "document", { cookie: "theme=dark; portcullis_csrf=nonce.mac%3D" })
    const requests: Array<RequestInit | undefined> = []
    const { sent, fetch } = recorder(() => json(200, { ...pair(1), refresh_token: null }))
    const client = createClient({
      baseUrl,
      fetch: (input, init) => {
        requests.push(init)
        return fetch(input, init)
      },
      shape: { tokenTransport: "cookie" }
    })
    await client.refresh()
    await client.profile.me()
    expect(sent[0]?.headers.get("x-csrf-token")).toBe("nonce.mac=")
    expect(sent[0]?.body).toBeUndefined()
    expect(sent[1]?.headers.get("x-csrf-token")).toBeNull()
    expect(requests.map((init) => init?.credentials)).toEqual(["include", "include"])
    expect(client.session.refreshToken()).toBeUndefined()
  })
})

describe("the refresh lock without Web Locks", () => {
  it("runs the tasks of one name one after the other in this realm, a failed one included", async () => {
    const lock = exclusive("test")
    const events: Array<string> = []
    const task =
      (name: string, fail = false) =>
      async () => {
        events.push(`${name} start`)
        await new Promise((resolve) => setTimeout(resolve, 10))
        events.push(`${name} end`)
        if (fail) throw new Error(name)
        return name
      }
    const results = await Promise.allSettled([lock(task("a", true)), lock(task("b")), lock(task("c"))])
    expect(results.map((result) => result.status)).toEqual(["rejected", "fulfilled", "fulfilled"])
    expect(events).toEqual(["a start", "a end", "b start", "b end", "c start", "c end"])
  })
})
