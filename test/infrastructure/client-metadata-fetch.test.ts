import { createServer, type Server, type ServerResponse } from "node:http"
import type { AddressInfo } from "node:net"
import { Effect } from "effect"
import { afterAll, describe, expect, it } from "vitest"
import * as ClientMetadataDocumentsHttp from "../../infrastructure/oidc/ClientMetadataDocumentsHttp.js"

/**
 * The attacks on the Client ID Metadata Document fetcher (issue 53): a client_id is a URL the
 * service fetches for a stranger, so it must not reach this network's insides, nor be held by a
 * server that answers slowly or without end. The e2e suite drives the fetcher through the
 * provider; these pin each refusal on the fetcher itself, with short limits.
 */

const servers: Array<Server> = []
afterAll(async () => {
  await Promise.all(
    servers.map((server) => {
      server.closeAllConnections()
      return new Promise<void>((resolve) => server.close(() => resolve()))
    })
  )
})

/** A document server on loopback answering every request with `answer`. */
const serving = async (answer: (response: ServerResponse) => void) => {
  const server = createServer((_request, response) => answer(response))
  servers.push(server)
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}/client.json`
}

const limits = { timeoutMillis: 400, maxBytes: 1_000 }
const refusal = (url: string, allowPrivate = true) =>
  Effect.runPromise(Effect.flip(ClientMetadataDocumentsHttp.make(allowPrivate, limits).fetch(url)))

describe("the metadata document fetcher, attacked", () => {
  it("refuses loopback, private, link-local and unspecified addresses before connecting", async () => {
    const inside = [
      "http://127.0.0.1/client.json",
      "http://127.1.2.3/client.json",
      "http://[::1]/client.json",
      "http://10.0.0.1/client.json",
      "http://172.16.5.4/client.json",
      "http://192.168.1.1/client.json",
      "http://169.254.169.254/latest/meta-data",
      "http://[fe80::1]/client.json",
      "http://[fd00::1]/client.json",
      "http://0.0.0.0/client.json",
      "http://[::ffff:127.0.0.1]/client.json",
      "https://[::ffff:a9fe:a9fe]/client.json"
    ]
    for (const url of inside) {
      const started = Date.now()
      const refused = await refusal(url, false)
      expect(refused.reason, url).toMatch(/is private .*OIDC_CLIENT_METADATA_ALLOW_PRIVATE=true allows it/)
      // Refused by the address itself: no connection was tried, so no time went by waiting.
      expect(Date.now() - started, url).toBeLessThan(limits.timeoutMillis)
    }
  })

  it("gives up on a server that never answers, within the whole fetch's time", async () => {
    const url = await serving(() => undefined)
    const started = Date.now()
    const refused = await refusal(url)
    expect(refused.reason).toMatch(/could not be fetched/)
    expect(Date.now() - started).toBeGreaterThanOrEqual(limits.timeoutMillis - 50)
    expect(Date.now() - started).toBeLessThan(limits.timeoutMillis + 1_000)
  })

  it("gives up on a document that trickles in, byte by byte, past the whole fetch's time", async () => {
    const url = await serving((response) => {
      response.writeHead(200, { "content-type": "application/json" })
      response.write("{")
      // Each byte comes before any idle timeout would end the connection: only a bound on the
      // whole fetch stops it.
      const trickle = setInterval(() => response.write(" "), 50)
      response.on("close", () => clearInterval(trickle))
    })
    const started = Date.now()
    const refused = await refusal(url)
    expect(refused.reason).toMatch(/broke off|could not be fetched/)
    expect(Date.now() - started).toBeLessThan(limits.timeoutMillis + 1_000)
  })

  it("stops reading a document past its size, even one that would never end", async () => {
    let closed = false
    const url = await serving((response) => {
      response.writeHead(200, { "content-type": "application/json" })
      const flood = setInterval(() => response.write("x".repeat(600)), 5)
      response.on("close", () => {
        closed = true
        clearInterval(flood)
      })
    })
    const refused = await refusal(url)
    expect(refused.reason).toBe(`the document is larger than ${limits.maxBytes} bytes`)
    // The connection is cut, not drained.
    await new Promise((resolve) => setTimeout(resolve, 100))
    expect(closed).toBe(true)
  })

  it("follows no redirect, not even to a public address", async () => {
    let visited = false
    const target = await serving((response) => {
      visited = true
      response.end("{}")
    })
    const url = await serving((response) => {
      response.writeHead(302, { location: target })
      response.end()
    })
    const refused = await refusal(url)
    expect(refused.reason).toBe("the document's server answered 302")
    expect(visited).toBe(false)
  })

  it("takes a document within the limits, with its max-age", async () => {
    const url = await serving((response) => {
      response.writeHead(200, { "content-type": "application/json", "cache-control": "public, max-age=600" })
      response.end(JSON.stringify({ client_id: "x" }))
    })
    const fetched = await Effect.runPromise(ClientMetadataDocumentsHttp.make(true, limits).fetch(url))
    expect(fetched).toEqual({ document: { client_id: "x" }, maxAgeSeconds: 600 })
  })
})
