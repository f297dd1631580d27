import { type LookupAddress, lookup } from "node:dns"
import { type ClientRequest, request as httpRequest, type IncomingMessage } from "node:http"
import { request as httpsRequest } from "node:https"
import { BlockList, isIP } from "node:net"
import { Effect, Layer, Redacted } from "effect"
import { Webhook } from "standardwebhooks"
import { WebhookTransport } from "../../application/ports/WebhookTransport.js"
import { DeliveryOutcome } from "../../domain/Webhook.js"

/** A try that has not been answered in this long is cut. */
export const TIMEOUT_MILLIS = 10_000

/** At most this much of an answer is read: a receiver cannot make a deliverer hold its stream. */
export const MAX_ANSWER_BYTES = 1_048_576

/**
 * The addresses of the service's own network and the Internet's special ranges: a webhook URL
 * that resolves into one of them could make the service probe what only it can reach.
 */
const privateRanges = (() => {
  const list = new BlockList()
  for (const [network, prefix] of [
    ["0.0.0.0", 8],
    ["10.0.0.0", 8],
    ["100.64.0.0", 10],
    ["127.0.0.0", 8],
    ["169.254.0.0", 16],
    ["172.16.0.0", 12],
    ["192.0.0.0", 24],
    ["192.168.0.0", 16],
    ["198.18.0.0", 15],
    ["224.0.0.0", 4],
    ["240.0.0.0", 4]
  ] as const)
    list.addSubnet(network, prefix, "ipv4")
  for (const [network, prefix] of [
    ["::", 127],
    ["64:ff9b::", 96],
    ["fc00::", 7],
    ["fe80::", 10],
    ["ff00::", 8]
  ] as const)
    list.addSubnet(network, prefix, "ipv6")
  return list
})()

/** Whether `address` (an IP literal) is one a webhook may not reach; IPv4 mapped in IPv6 is checked as IPv4. */
export const isPrivateAddress = (address: string): boolean => {
  const family = isIP(address)
  if (family === 0) return true
  return privateRanges.check(address, family === 4 ? "ipv4" : "ipv6")
}

class RefusedAddress extends Error {
  constructor(readonly address: string) {
    super(`address ${address} is private; WEBHOOKS_ALLOW_PRIVATE=true allows it`)
  }
}

/**
 * Name resolution for an outgoing try that refuses private addresses at connect time (a check
 * before the request could be answered otherwise by the time it connects). Node asks for one
 * address or, choosing between families, for all of them.
 */
const guardedLookup = (
  hostname: string,
  options: { readonly all?: boolean; readonly family?: number },
  callback: (error: Error | null, address: string | ReadonlyArray<LookupAddress>, family?: number) => void
) =>
  lookup(hostname, { ...options, all: true }, (error, addresses) => {
    if (error) return callback(error, "")
    const refused = addresses.find((found) => isPrivateAddress(found.address))
    if (refused !== undefined) return callback(new RefusedAddress(refused.address), "")
    const [first] = addresses
    if (options.all === true) return callback(null, addresses)
    if (first === undefined) return callback(new Error(`${hostname} has no address`), "")
    return callback(null, first.address, first.family)
  })

/** The headers Standard Webhooks asks for: the id, the time in seconds and the signature over both and the body. */
export const signedHeaders = (secret: string, id: string, at: Date, body: string) => ({
  "content-type": "application/json",
  "user-agent": "Portcullis-Webhooks",
  "webhook-id": id,
  "webhook-timestamp": String(Math.floor(at.getTime() / 1000)),
  "webhook-signature": new Webhook(secret).sign(id, at, body)
})

/**
 * One POST with node:http(s), no agent (nothing kept between tries), no redirect followed, cut at
 * TIMEOUT_MILLIS, its answer read up to MAX_ANSWER_BYTES and then dropped: only the status counts.
 */
const post = (url: URL, headers: Record<string, string>, body: string, allowPrivate: boolean) =>
  new Promise<DeliveryOutcome>((resolve) => {
    const request: ClientRequest = (url.protocol === "https:" ? httpsRequest : httpRequest)(url, {
      method: "POST",
      agent: false,
      headers: { ...headers, "content-length": String(Buffer.byteLength(body)) },
      signal: AbortSignal.timeout(TIMEOUT_MILLIS),
      ...(allowPrivate ? {} : { lookup: guardedLookup as never })
    })
    request.on("response", (answer: IncomingMessage) => {
      const status = answer.statusCode ?? 0
      let read = 0
      answer.on("data", (chunk: Buffer) => {
        read += chunk.length
        if (read > MAX_ANSWER_BYTES) answer.destroy()
      })
      answer.on("error", () => {})
      if (status >= 200 && status < 300) resolve(DeliveryOutcome.Delivered({ status }))
      else if (status >= 300 && status < 400)
        resolve(DeliveryOutcome.Failed({ reason: `HTTP ${status}: redirect not followed` }))
      else resolve(DeliveryOutcome.Failed({ reason: `HTTP ${status}` }))
    })
    request.on("error", (error: Error & { readonly code?: string }) =>
      resolve(
        DeliveryOutcome.Failed({
          reason:
            error instanceof RefusedAddress
              ? error.message
              : error.name === "AbortError" || error.code === "ABORT_ERR"
                ? `no answer within ${TIMEOUT_MILLIS / 1000} s`
                : error.message
        })
      )
    )
    request.end(body)
  })

/** The transport over HTTP; `allowPrivate` (WEBHOOKS_ALLOW_PRIVATE) lets URLs reach private addresses. */
export const make = (allowPrivate: boolean) =>
  WebhookTransport.of({
    send: (endpoint, message) =>
      Effect.promise(() => {
        const url = new URL(endpoint.url)
        const host = url.hostname.replace(/^\[|\]$/g, "")
        if (!allowPrivate && isIP(host) !== 0 && isPrivateAddress(host)) {
          return Promise.resolve(DeliveryOutcome.Failed({ reason: new RefusedAddress(host).message }))
        }
        const at = new Date(message.timestamp.epochMillis)
        return post(
          url,
          signedHeaders(Redacted.value(endpoint.secret), message.id, at, message.body),
          message.body,
          allowPrivate
        )
      })
  })

export const layer = (allowPrivate: boolean) => Layer.succeed(WebhookTransport, make(allowPrivate))
