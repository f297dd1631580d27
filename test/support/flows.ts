import { randomUUID } from "node:crypto"
import { expect } from "@effect/vitest"
import { Effect } from "effect"
import { TestApp } from "./TestApp.js"

export const password = "correct horse battery staple"

/** A fresh address per test, so tests sharing one server never see each other's users. */
export const uniqueEmail = (label = "user") => `${label}-${randomUUID().slice(0, 8)}@example.com`

export interface Session {
  readonly email: string
  readonly access: string
  readonly refresh: string
  /** The id as the domain and the token's `sub` hold it: always a string. */
  readonly userId: string
  /** The id as the user object carries it: a number for integer ids, else the same string. */
  readonly id: string | number
}

export const register = (email: string, secret = password) =>
  Effect.flatMap(TestApp, (app) =>
    app.request("POST", `${app.settings.server.authPrefix}/register`, { json: { email, password: secret } })
  )

export const login = (email: string, secret = password, headers: Record<string, string> = {}) =>
  Effect.flatMap(TestApp, (app) =>
    app.request("POST", `${app.settings.server.authPrefix}/login`, { json: { email, password: secret }, headers })
  )

/** Logs in and answers the tokens; fails the test unless login answers 200. */
export const signIn = (email: string, secret = password) =>
  Effect.gen(function* () {
    const reply = yield* login(email, secret)
    expect(reply.status).toBe(200)
    const body = reply.body as { access_token: string; refresh_token: string; user: { id: string | number } }
    const { id } = body.user
    return { email, access: body.access_token, refresh: body.refresh_token, userId: String(id), id } satisfies Session
  })

/** Registers a new user and signs in once. */
export const signUp = (label?: string) =>
  Effect.gen(function* () {
    const email = uniqueEmail(label)
    expect((yield* register(email)).status).toBe(202)
    return yield* signIn(email)
  })

export const refresh = (refreshToken: string) =>
  Effect.flatMap(TestApp, (app) =>
    app.request("POST", `${app.settings.server.authPrefix}/refresh`, { json: { refresh_token: refreshToken } })
  )

export const me = (token: string) =>
  Effect.flatMap(TestApp, (app) => app.request("GET", `${app.settings.server.authPrefix}/me`, { token }))

export const call = (method: string, path: string, options: Parameters<TestApp["Type"]["request"]>[2] = {}) =>
  Effect.flatMap(TestApp, (app) => app.request(method, `${app.settings.server.authPrefix}${path}`, options))

/** Asserts an RFC 9457 problem with this status and code, and answers its body. */
export const expectProblem = (
  reply: { readonly status: number; readonly headers: Headers; readonly body: unknown },
  status: number,
  code: string
) => {
  expect(reply.status).toBe(status)
  expect(reply.headers.get("content-type")).toBe("application/problem+json")
  const body = reply.body as { status: number; code: string; title: string; detail: string; type: string }
  expect(body).toMatchObject({ status, code })
  expect(body.title).toEqual(expect.any(String))
  expect(body.detail).toEqual(expect.any(String))
  return body as typeof body & { errors?: ReadonlyArray<{ path: string; message: string }> }
}
