import { request as httpRequest, type IncomingMessage } from "node:http"
import { request as httpsRequest } from "node:https"
import { isIP } from "node:net"
import { Effect, Layer } from "effect"
import {
  ClientDocumentError,
  ClientMetadataDocuments,
  type FetchedDocument
} from "../../application/ports/ClientMetadataDocuments.js"
import { guardedLookup, isPrivateAddress, RefusedAddress } from "../net/addressGuard.js"

/** How far one fetch may go. */
export interface DocumentLimits {
  /** The whole fetch, connection to last byte, within this. */
  readonly timeoutMillis: number
  /** At most this much of a document. */
  readonly maxBytes: number
}

/** A client's metadata is a few hundred bytes, and its server answers at once. */
export const documentLimits: DocumentLimits = { timeoutMillis: 5_000, maxBytes: 5_120 }

const maxAgeOf = (cacheControl: string | undefined) => {
  const found = /(?:^|,)\s*max-age\s*=\s*"?(\d{1,10})"?/i.exec(cacheControl ?? "")
  return found === null ? undefined : Number(found[1])
}

/**
 * One GET with node:http(s), no agent, no redirect followed, cut at the limits' time and size. Unless `allowPrivate`, a private address is refused: an IP literal before
 * connecting, a name at connect time by the guarded lookup (one resolution, checked and used).
 */
const get = (url: URL, allowPrivate: boolean, limits: DocumentLimits) =>
  new Promise<FetchedDocument>((resolve, reject) => {
    const fail = (reason: string) => reject(new ClientDocumentError({ reason }))
    const host = url.hostname.replace(/^\[|\]$/g, "")
    if (!allowPrivate && isIP(host) !== 0 && isPrivateAddress(host))
      return fail(`${new RefusedAddress(host).message}; OIDC_CLIENT_METADATA_ALLOW_PRIVATE=true allows it`)
    const request = (url.protocol === "https:" ? httpsRequest : httpRequest)(url, {
      method: "GET",
      agent: false,
      headers: { accept: "application/json", "user-agent": "Portcullis-OpenID-Provider" },
      signal: AbortSignal.timeout(limits.timeoutMillis),
      ...(allowPrivate ? {} : { lookup: guardedLookup })
    })
    request.on("error", (error) =>
      fail(
        error instanceof RefusedAddress
          ? `${error.message}; OIDC_CLIENT_METADATA_ALLOW_PRIVATE=true allows it`
          : `the document could not be fetched (${error.name})`
      )
    )
    request.on("response", (response: IncomingMessage) => {
      if (response.statusCode !== 200) {
        response.resume()
        return fail(`the document's server answered ${response.statusCode}`)
      }
      const chunks: Array<Buffer> = []
      let size = 0
      response.on("data", (chunk: Buffer) => {
        size += chunk.length
        if (size > limits.maxBytes) {
          request.destroy()
          return fail(`the document is larger than ${limits.maxBytes} bytes`)
        }
        chunks.push(chunk)
      })
      response.on("error", () => fail("the document's answer broke off"))
      response.on("end", () => {
        if (size > limits.maxBytes) return
        try {
          resolve({
            document: JSON.parse(Buffer.concat(chunks).toString("utf8")),
            maxAgeSeconds: maxAgeOf(response.headers["cache-control"])
          })
        } catch {
          fail("the document is not JSON")
        }
      })
    })
    request.end()
  })

export const make = (allowPrivate: boolean, limits: DocumentLimits = documentLimits) =>
  ClientMetadataDocuments.of({
    fetch: (url) =>
      Effect.tryPromise({
        try: () => get(new URL(url), allowPrivate, limits),
        catch: (error) =>
          error instanceof ClientDocumentError
            ? error
            : new ClientDocumentError({ reason: "the document could not be fetched" })
      })
  })

export const layer = (allowPrivate: boolean) => Layer.succeed(ClientMetadataDocuments, make(allowPrivate))
