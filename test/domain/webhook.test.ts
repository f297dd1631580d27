import { describe, expect, it } from "@effect/vitest"
import { DateTime, Either, Option } from "effect"
import { endpointId, parseEndpoints } from "../../config/sections/webhooks.js"
import { AuthEvent } from "../../domain/Events.js"
import { Email, toPublicUser, User, UserId } from "../../domain/User.js"
import {
  AfterFailure,
  afterFailure,
  eventMessage,
  MAX_ATTEMPTS,
  unknownEventTypes,
  wants,
  webhookEventTypes
} from "../../domain/Webhook.js"

const now = DateTime.unsafeMake(Date.UTC(2033, 0, 1))
const waitOf = (next: AfterFailure) =>
  next._tag === "Retry" ? DateTime.toEpochMillis(next.at) - DateTime.toEpochMillis(now) : null

describe("the retry schedule", () => {
  it("waits about 5 s, 5 min, 30 min, 2 h, 5 h, 10 h and 10 h, each moved by at most a fifth; the eighth failure is the last", () => {
    const middle = [1, 2, 3, 4, 5, 6, 7].map((attempt) => waitOf(afterFailure(attempt, now, 0.5)))
    expect(middle).toEqual([5_000, 300_000, 1_800_000, 7_200_000, 18_000_000, 36_000_000, 36_000_000])
    expect(waitOf(afterFailure(1, now, 0))).toBe(4_000)
    expect(waitOf(afterFailure(1, now, 0.999_999))).toBeCloseTo(6_000, -1)
    expect(MAX_ATTEMPTS).toBe(8)
    expect(afterFailure(8, now, 0.5)).toEqual(AfterFailure.Dead())
  })
})

describe("subscriptions", () => {
  it("every event type of the spec and of the audit log can be subscribed to; others are named as unknown", () => {
    expect(webhookEventTypes).toContain("after_register")
    expect(webhookEventTypes).toContain("session.evicted")
    expect(wants("*", "session.evicted")).toBe(true)
    expect(wants(["after_login"], "after_logout")).toBe(false)
    expect(unknownEventTypes(["after_login", "after_lunch"])).toEqual(["after_lunch"])
  })
})

describe("what a receiver is told of an event", () => {
  const user = new User({
    id: UserId.make("0190f0c2-0000-7000-8000-000000000001"),
    email: Email.make("ada@example.com"),
    is_active: true,
    is_verified: true,
    is_superuser: false,
    created_at: now,
    roles: [],
    hashed_password: Option.some("$argon2id$v=19$m=19456,t=2,p=1$c2FsdA$aGFzaA")
  })

  it("the user as GET /me shows them, never the hash", () => {
    const message = eventMessage(AuthEvent.after_login({ user: toPublicUser(user) }))
    expect(message.type).toBe("after_login")
    expect(message.user_id).toBe(user.id)
    expect(message.data.user).toMatchObject({ email: "ada@example.com", created_at: "2033-01-01T00:00:00.000Z" })
    expect(JSON.stringify(message)).not.toContain("argon2")
  })

  it("a send event's token and code stay in the mail; an OAuth profile stays with its provider", () => {
    const signIn = eventMessage(
      AuthEvent.send_sign_in_email({ email: "ada@example.com", token: "the-token", code: "123456", sign_up: false })
    )
    expect(signIn.data).toEqual({ email: "ada@example.com", sign_up: false })
    const reset = eventMessage(AuthEvent.send_password_reset_email({ email: "ada@example.com", token: "the-token" }))
    expect(JSON.stringify(reset)).not.toContain("the-token")
    const registered = eventMessage(
      AuthEvent.after_oauth_register({ user: toPublicUser(user), user_info: { access_token: "provider-token" } })
    )
    expect(JSON.stringify(registered)).not.toContain("provider-token")
  })
})

describe("WEBHOOKS", () => {
  const secret = `whsec_${Buffer.alloc(32, 7).toString("base64")}`
  const fault = (value: unknown) => Either.match(parseEndpoints(value), { onLeft: (why) => why, onRight: () => "" })

  it("reads endpoints, each with an id that follows its URL", () => {
    const parsed = parseEndpoints([{ url: "https://hooks.example.com/in", secret, events: ["after_register"] }])
    expect(Either.getOrThrow(parsed)[0]).toMatchObject({
      id: endpointId("https://hooks.example.com/in"),
      url: "https://hooks.example.com/in",
      events: ["after_register"]
    })
  })

  it("names the fault of a bad entry, never its secret", () => {
    expect(fault({})).toMatch(/not a list/)
    expect(fault([{ url: "ftp://x", secret, events: "*" }])).toMatch(/not http/)
    expect(fault([{ url: "https://x.example", secret: "plain", events: "*" }])).toMatch(/no valid secret/)
    expect(fault([{ url: "https://x.example", secret: "whsec_c2hvcnQ=", events: "*" }])).toMatch(/no valid secret/)
    expect(fault([{ url: "https://x.example", secret, events: [] }])).toMatch(/no events/)
    expect(fault([{ url: "https://x.example", secret, events: ["after_lunch"] }])).toMatch(
      /unknown event types: after_lunch/
    )
    const twice = { url: "https://x.example", secret, events: "*" }
    expect(fault([twice, twice])).toMatch(/repeats the url/)
    expect(fault([{ url: "https://x.example", secret: `${secret}!`, events: "*" }])).not.toContain(secret)
  })
})
