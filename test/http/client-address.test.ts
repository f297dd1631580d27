import * as HttpApi from "@effect/platform/HttpApi"
import { describe, expect, it } from "@effect/vitest"
import { features } from "../../composition/features.js"
import {
  addressBucket,
  forwardedAddresses,
  normaliseAddress,
  resolveClientAddress
} from "../../interfaces/http/clientAddress.js"
import type { LimitedRoute } from "../../interfaces/http/routes.js"
import { routeProbe } from "../support/routeProbe.js"

const xff = { headers: ["x-forwarded-for"], count: 1 }

describe("client address resolution", () => {
  it("without a trusted header, the socket's peer is the client and X-Forwarded-For is ignored", () => {
    const none = { headers: [], count: 1 }
    expect(resolveClientAddress({ "x-forwarded-for": "203.0.113.9" }, "10.0.0.2", none)).toBe("10.0.0.2")
    expect(resolveClientAddress({}, "10.0.0.2", none)).toBe("10.0.0.2")
    expect(resolveClientAddress({}, undefined, none)).toBeUndefined()
  })

  it("each socket's peer is normalised as its own, whichever peer came before it", () => {
    const none = { headers: [], count: 1 }
    const peers = [
      ["::ffff:192.0.2.1", "192.0.2.1"],
      ["::ffff:192.0.2.1", "192.0.2.1"],
      ["2001:DB8:0:0:0:0:0:1", "2001:db8::1"],
      ["not an address", undefined],
      ["::ffff:192.0.2.1", "192.0.2.1"],
      ["10.0.0.2", "10.0.0.2"]
    ] as const
    for (const [peer, expected] of peers) expect(resolveClientAddress({}, peer, none)).toBe(expected)
  })

  it("with one trusted proxy, the right-most entry is the client, whatever the client prepended", () => {
    const headers = { "x-forwarded-for": "1.1.1.1, 2.2.2.2,203.0.113.9" }
    expect(resolveClientAddress(headers, "10.0.0.2", xff)).toBe("203.0.113.9")
  })

  it("with N trusted proxies, the N-th entry from the right is the client", () => {
    const headers = { "x-forwarded-for": "6.6.6.6, 203.0.113.9, 10.0.0.7, 10.0.0.8" }
    expect(resolveClientAddress(headers, "10.0.0.2", { headers: ["x-forwarded-for"], count: 3 })).toBe("203.0.113.9")
    expect(resolveClientAddress(headers, "10.0.0.2", { headers: ["x-forwarded-for"], count: 2 })).toBe("10.0.0.7")
  })

  it("a header with fewer entries than trusted proxies, or a non-address at the chosen place, falls back to the socket", () => {
    const two = { headers: ["x-forwarded-for"], count: 2 }
    expect(resolveClientAddress({ "x-forwarded-for": "203.0.113.9" }, "10.0.0.2", two)).toBe("10.0.0.2")
    expect(resolveClientAddress({ "x-forwarded-for": "" }, "10.0.0.2", xff)).toBe("10.0.0.2")
    expect(resolveClientAddress({ "x-forwarded-for": "1.1.1.1, unknown" }, "10.0.0.2", xff)).toBe("10.0.0.2")
    expect(resolveClientAddress({ "x-forwarded-for": "1.1.1.1, 999.1.1.1" }, "10.0.0.2", xff)).toBe("10.0.0.2")
  })

  it("the first trusted header the request carries is read; an untrusted one never is", () => {
    const proxies = { headers: ["x-real-ip", "x-forwarded-for"], count: 1 }
    expect(
      resolveClientAddress({ "x-real-ip": "198.51.100.1", "x-forwarded-for": "203.0.113.9" }, "10.0.0.2", proxies)
    ).toBe("198.51.100.1")
    expect(resolveClientAddress({ "x-forwarded-for": "203.0.113.9" }, "10.0.0.2", proxies)).toBe("203.0.113.9")
    expect(resolveClientAddress({ "x-client-ip": "203.0.113.9" }, "10.0.0.2", proxies)).toBe("10.0.0.2")
  })

  it("RFC 7239 Forwarded is read by its for= parameters, quoted, bracketed and with ports", () => {
    const proxies = { headers: ["forwarded"], count: 1 }
    expect(
      forwardedAddresses("forwarded", 'for=192.0.2.60;proto=http;by=203.0.113.43, for="[2001:db8::17]:4711"')
    ).toEqual(["192.0.2.60", "[2001:db8::17]:4711"])
    expect(
      resolveClientAddress({ forwarded: 'for=6.6.6.6, proto=https;For="[2001:DB8::17]:4711"' }, "10.0.0.2", proxies)
    ).toBe("2001:db8::17")
    expect(resolveClientAddress({ forwarded: "for=_hidden" }, "10.0.0.2", proxies)).toBe("10.0.0.2")
    expect(resolveClientAddress({ forwarded: "proto=https" }, "10.0.0.2", proxies)).toBe("10.0.0.2")
  })

  it("the socket's IPv4-mapped IPv6 peer is recorded as the IPv4 address", () => {
    expect(resolveClientAddress({}, "::ffff:127.0.0.1", { headers: [], count: 1 })).toBe("127.0.0.1")
  })
})

describe("address normalisation", () => {
  it("keeps IPv4 dotted-decimal and drops a port", () => {
    expect(normaliseAddress("203.0.113.9")).toBe("203.0.113.9")
    expect(normaliseAddress(" 203.0.113.9:8080 ")).toBe("203.0.113.9")
  })

  it("writes IPv6 in RFC 5952 form, without brackets, port or zone", () => {
    expect(normaliseAddress("2001:0DB8:0000:0000:0000:0000:0000:0001")).toBe("2001:db8::1")
    expect(normaliseAddress("[2001:db8::1]:443")).toBe("2001:db8::1")
    expect(normaliseAddress("[2001:db8::1]")).toBe("2001:db8::1")
    expect(normaliseAddress("fe80::1%eth0")).toBe("fe80::1")
    expect(normaliseAddress("2001:db8:0:0:1:0:0:1")).toBe("2001:db8::1:0:0:1")
    expect(normaliseAddress("2001:db8:0:1:1:1:1:1")).toBe("2001:db8:0:1:1:1:1:1")
    expect(normaliseAddress("::")).toBe("::")
    expect(normaliseAddress("::1")).toBe("::1")
    expect(normaliseAddress("64:ff9b::192.0.2.33")).toBe("64:ff9b::c000:221")
  })

  it("treats IPv4-mapped IPv6 as IPv4", () => {
    expect(normaliseAddress("::ffff:203.0.113.9")).toBe("203.0.113.9")
    expect(normaliseAddress("::FFFF:cb00:7109")).toBe("203.0.113.9")
    expect(normaliseAddress("[::ffff:203.0.113.9]:443")).toBe("203.0.113.9")
  })

  it("refuses what is not an address", () => {
    for (const raw of [
      "",
      "unknown",
      "_hidden",
      "256.1.1.1",
      "1.2.3",
      "01.2.3.4",
      "1:2:3:4:5:6:7:8:9",
      "1::2::3",
      "12345::1",
      ":1:2:3:4:5:6:7",
      "1:2:3:4:5:6:7:",
      "g::1",
      "::ffff:1.2.3",
      "[2001:db8::1",
      "[2001:db8::1]x"
    ]) {
      expect(normaliseAddress(raw), raw).toBeUndefined()
    }
  })
})

describe("rate-limit keys", () => {
  it("an IPv4 client is counted by its address", () => {
    expect(addressBucket("203.0.113.9")).toBe("203.0.113.9")
    expect(addressBucket("::ffff:203.0.113.9")).toBe("203.0.113.9")
  })

  it("IPv6 clients are bucketed by /64: addresses of one /64 share a key, the next /64 does not", () => {
    const key = addressBucket("2001:db8:aaaa:bbbb::1")
    expect(key).toBe("2001:db8:aaaa:bbbb::/64")
    expect(addressBucket("2001:db8:aaaa:bbbb:ffff:ffff:ffff:ffff")).toBe(key)
    expect(addressBucket("2001:0db8:AAAA:bbbb:1234:5678:9abc:def0")).toBe(key)
    expect(addressBucket("2001:db8:aaaa:bbbc::1")).not.toBe(key)
    expect(addressBucket("::1")).toBe("::/64")
    expect(addressBucket("2001:db8::1")).toBe("2001:db8::/64")
  })
})

/** Which bucket counts a request, by its method and path, as the router resolves them. */
const bucketOf = (prefix: string, routes: ReadonlyArray<LimitedRoute>) => {
  const resolve = routeProbe(HttpApi.make("none"), { limits: { prefix, routes } })
  return async (method: string, path: string) => (await resolve(method, path)).bucket
}

describe("route buckets", () => {
  const limitedRoutes = features.flatMap((feature) => feature.limits)
  const bucket = bucketOf("/api/v1/auth", limitedRoutes)

  it("maps each limited route by method and path, routes not built yet included", async () => {
    expect(await bucket("POST", "/api/v1/auth/login")).toBe("login")
    expect(await bucket("POST", "/api/v1/auth/register")).toBe("register")
    expect(await bucket("POST", "/api/v1/auth/refresh")).toBe("refresh")
    expect(await bucket("POST", "/api/v1/auth/password-reset/request")).toBe("password_reset")
    expect(await bucket("POST", "/api/v1/auth/password-reset/confirm")).toBe("password_reset")
    expect(await bucket("POST", "/api/v1/auth/verify-email/request")).toBe("verify_email")
    expect(await bucket("POST", "/api/v1/auth/verify-email/confirm")).toBe("verify_email")
    expect(await bucket("POST", "/api/v1/auth/passkeys/authenticate/begin")).toBe("passkey_auth")
    expect(await bucket("POST", "/api/v1/auth/passkeys/authenticate/complete")).toBe("passkey_auth")
    expect(await bucket("POST", "/api/v1/auth/oauth/github/callback")).toBe("oauth_callback")
  })

  it("leaves other methods, routes and prefixes alone", async () => {
    expect(await bucket("GET", "/api/v1/auth/login")).toBeUndefined()
    expect(await bucket("POST", "/api/v1/auth/logout")).toBeUndefined()
    expect(await bucket("POST", "/api/v1/auth/passkeys/register/begin")).toBeUndefined()
    expect(await bucket("POST", "/api/v1/auth/oauth/github/authorize")).toBeUndefined()
    expect(await bucket("POST", "/api/v1/auth/oauth/a/b/callback")).toBeUndefined()
    expect(await bucket("POST", "/login")).toBeUndefined()
    expect(await bucketOf("", limitedRoutes)("POST", "/login")).toBe("login")
  })

  it("reads a request target as the router does, so no spelling of a limited route escapes its bucket", async () => {
    for (const target of [
      "/api/v1/auth/login",
      "/api/v1/auth/login/",
      "//api//v1/auth///login",
      "/API/V1/Auth/LOGIN",
      "/api/v1/auth/login?next=1"
    ]) {
      expect(await bucket("POST", target), target).toBe("login")
    }
    expect(await bucket("POST", "/api/v1/auth/OAuth/GitHub/Callback/")).toBe("oauth_callback")
  })
})
