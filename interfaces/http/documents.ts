import { createHash } from "node:crypto"
import { promisify } from "node:util"
import { brotliCompress, constants, gzip } from "node:zlib"
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import { Effect } from "effect"
import type { Step } from "./step.js"

/** The documents are the same for the life of the process; clients revalidate them after this. */
const CACHE_CONTROL = "public, max-age=300"

type Encoding = "br" | "gzip" | "identity"

/** The best encoding the client accepts (RFC 9110 Accept-Encoding, q=0 refusing one). */
export const preferredEncoding = (accept: string | undefined): Encoding => {
  const accepted = new Set<string>()
  for (const part of (accept ?? "").toLowerCase().split(",")) {
    const [token = "", ...parameters] = part.trim().split(";")
    const q = parameters.map((p) => p.trim()).find((p) => p.startsWith("q="))
    if (q === undefined || Number(q.slice(2)) > 0) accepted.add(token.trim())
  }
  if (accepted.has("br")) return "br"
  if (accepted.has("gzip") || accepted.has("*")) return "gzip"
  return "identity"
}

interface Representation {
  readonly etag: string
  readonly body: Uint8Array
}

const brotli = promisify(brotliCompress)
const gzipped = promisify(gzip)

/**
 * Compressed on the thread pool, once per representation: brotli's default quality takes seconds
 * over the docs page's 2 MB, a middle one a few milliseconds for nearly the same size.
 */
const encode = (body: Uint8Array, encoding: Encoding): Effect.Effect<Uint8Array> =>
  encoding === "identity"
    ? Effect.succeed(body)
    : Effect.promise(() =>
        encoding === "br" ? brotli(body, { params: { [constants.BROTLI_PARAM_QUALITY]: 5 } }) : gzipped(body)
      )

/**
 * The OpenAPI document and the docs page (about 2 MB of script) as caches and slow links want
 * them: an ETag (304 when the client has it), a max-age, and gzip or brotli when the client
 * accepts it. Each representation is compressed once and kept.
 */
export const cacheableDocuments = (paths: ReadonlyArray<string>): Step => {
  const served = new Set(paths)
  const kept = new Map<string, Representation>()
  const representation = (path: string, body: Uint8Array, encoding: Encoding): Effect.Effect<Representation> => {
    const digest = createHash("sha256").update(body).digest("base64url").slice(0, 27)
    const key = `${path} ${digest} ${encoding}`
    const found = kept.get(key)
    if (found !== undefined) return Effect.succeed(found)
    const etag = `"${digest}${encoding === "identity" ? "" : `-${encoding}`}"`
    return Effect.map(encode(body, encoding), (encoded) => {
      const made = { etag, body: encoded }
      kept.set(key, made)
      return made
    })
  }
  return (next) => (routed) => {
    const { request, route } = routed
    if (request.method !== "GET" || !served.has(route.id)) return next(routed)
    const path = route.id
    return Effect.flatMap(next(routed), (response) => {
      if (response.status !== 200 || response.body._tag !== "Uint8Array") return Effect.succeed(response)
      const { contentType } = response.body
      const encoding = preferredEncoding(request.headers["accept-encoding"])
      return Effect.map(representation(path, response.body.body, encoding), ({ etag, body }) => {
        // The inner steps' headers (the rate limits') stay; the representation's are added.
        const headers = {
          ...response.headers,
          etag,
          "cache-control": CACHE_CONTROL,
          vary: "Accept-Encoding",
          ...(encoding === "identity" ? {} : { "content-encoding": encoding })
        }
        const cached = request.headers["if-none-match"]
          ?.split(",")
          .some((tag) => tag.trim().replace(/^W\//, "") === etag)
        if (cached === true) return HttpServerResponse.empty({ status: 304, headers })
        return HttpServerResponse.uint8Array(body, {
          status: 200,
          headers,
          ...(contentType === undefined ? {} : { contentType })
        })
      })
    })
  }
}
