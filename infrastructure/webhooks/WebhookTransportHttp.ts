import { lookup } from "node:dns/promises"
import { type ClientRequest, request as httpRequest, type IncomingMessage } from "node:http"
import { request as httpsRequest } from "node:https"
import { isIP } from "node:net"
import { Effect, Layer, Redacted } from "effect"
import { Webhook } from "standardwebhooks"
import { WebhookTransport } from "../../application/ports/WebhookTransport.js"
import { DeliveryOutcome } from "../../domain/Webhook.js"
import { guardedLookup, isPrivateAddress, RefusedAddress } from "../net/addressGuard.js"

/** A try that has not been answered in this long is cut. */
export const TIMEOUT_MILLIS = 10_000

/** At most this much of an answer is read: a receiver cannot make a deliverer hold its stream. */
export const MAX_ANSWER_BYTES = 1_048_576

/** The headers Standard Webhooks asks for: the id, the time in seconds and the signature over both and the body. */
export const signedHeaders = (secret: string, id: string, at: Date, body: string) => ({
  "content-type": "application/json",
  "user-agent": "Portcullis-Webhooks",
  "webhook-id": id,
  "webhook-timestamp": String(Math.floor(at.getTime() / 1000)),
  "webhook-signature": new Webhook(secret).sign(id, at, body)
})

/** Why a try to a private address failed, and how an operator lets it through. */
const refusal = (refused: RefusedAddress) => `${refused.message}; SERVICE_WEBHOOKS_ALLOW_PRIVATE=true allows it`

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
      ...(allowPrivate ? {} : { lookup: guardedLookup })
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
              ? refusal(error)
              : error.name === "AbortError" || error.code === "ABORT_ERR"
                ? `no answer within ${TIMEOUT_MILLIS / 1000} s`
                : error.message
        })
      )
    )
    request.end(body)
  })

/** How long `refusal` waits for the name of a URL's host to resolve before it says nothing. */
const RESOLVE_MILLIS = 2_000

/** The addresses `host` resolves to, none when it does not resolve in time. */
const addressesOf = (host: string) =>
  Promise.race([
    lookup(host, { all: true }).then(
      (found) => found.map((one) => one.address),
      () => []
    ),
    new Promise<ReadonlyArray<string>>((resolve) => setTimeout(() => resolve([]), RESOLVE_MILLIS).unref())
  ])

/** The transport over HTTP; `allowPrivate` (WEBHOOKS_ALLOW_PRIVATE) lets URLs reach private addresses. */
export const make = (allowPrivate: boolean) =>
  WebhookTransport.of({
    refusal: (url) =>
      Effect.promise(async () => {
        if (allowPrivate) return undefined
        const host = new URL(url).hostname.replace(/^\[|\]$/g, "")
        const addresses = isIP(host) !== 0 ? [host] : await addressesOf(host)
        const refused = addresses.find(isPrivateAddress)
        return refused === undefined ? undefined : refusal(new RefusedAddress(refused))
      }),
    send: (endpoint, message) =>
      Effect.promise(() => {
        const url = new URL(endpoint.url)
        const host = url.hostname.replace(/^\[|\]$/g, "")
        if (!allowPrivate && isIP(host) !== 0 && isPrivateAddress(host)) {
          return Promise.resolve(DeliveryOutcome.Failed({ reason: refusal(new RefusedAddress(host)) }))
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
