import { Agent, request as httpRequest } from "node:http"
import { connect } from "node:net"

/**
 * An HTTP client that sends a request exactly as written: any method, a body on GET, repeated
 * and odd headers, no header of its own but Host and Connection. fetch cannot (it refuses bodies
 * on GET, adds Accept and User-Agent, and joins repeated headers).
 */

export interface Exchange {
  readonly method: string
  /** The request target as it goes on the request line: path and query, percent-encoded. */
  readonly target: string
  /** In order, repeated names allowed. */
  readonly headers: ReadonlyArray<readonly [string, string]>
  readonly body: Uint8Array | undefined
}

export interface Answer {
  readonly status: number
  /** Header names lower-cased; repeated ones joined with ", ". */
  readonly headers: Readonly<Record<string, string>>
  readonly body: Buffer
}

/** What came back: an answer, or why none did. */
export type Outcome = { readonly answer: Answer } | { readonly error: string }

const joined = (headers: NodeJS.Dict<string | ReadonlyArray<string>>) =>
  Object.fromEntries(
    Object.entries(headers).flatMap(([name, value]) =>
      value === undefined ? [] : [[name, typeof value === "string" ? value : value.join(", ")] as const]
    )
  )

/** A client for one origin with `sockets` keep-alive connections; it adds Host when the exchange has none. */
export const client = (origin: string, sockets: number) => {
  const url = new URL(origin)
  const agent = new Agent({ keepAlive: true, maxSockets: sockets })
  const send = (exchange: Exchange, timeoutMs = 10_000) =>
    new Promise<Outcome>((resolve) => {
      const hasHost = exchange.headers.some(([name]) => name.toLowerCase() === "host")
      const request = httpRequest({
        host: url.hostname,
        port: url.port,
        method: exchange.method,
        path: exchange.target,
        agent,
        // Raw header lines keep repeated names and their order; Node adds no Host to those.
        headers: [...(hasHost ? [] : [["host", url.host] as const]), ...exchange.headers].flat()
      })
      request.setTimeout(timeoutMs, () => request.destroy(new Error(`no answer within ${timeoutMs} ms`)))
      request.on("error", (error) => resolve({ error: `${error.name}: ${error.message}` }))
      request.on("response", (response) => {
        const chunks: Array<Buffer> = []
        response.on("data", (chunk: Buffer) => chunks.push(chunk))
        response.on("error", (error) => resolve({ error: `${error.name}: ${error.message}` }))
        response.on("end", () =>
          resolve({
            answer: { status: response.statusCode ?? 0, headers: joined(response.headers), body: Buffer.concat(chunks) }
          })
        )
      })
      request.end(exchange.body === undefined ? undefined : Buffer.from(exchange.body))
    })
  return { send, close: () => agent.destroy() }
}

/**
 * Bytes written on a fresh connection as they are, for what no HTTP client will send (control
 * characters on the request line, malformed header lines, conflicting framing). Answers every
 * response the server wrote before closing, in order.
 */
export const sendBytes = (origin: string, bytes: Uint8Array, timeoutMs = 5_000) =>
  new Promise<ReadonlyArray<Answer> | { readonly error: string }>((resolve) => {
    const url = new URL(origin)
    const socket = connect({ host: url.hostname, port: Number(url.port) })
    const chunks: Array<Buffer> = []
    const finish = () => {
      socket.destroy()
      const parsed = parseResponses(Buffer.concat(chunks))
      resolve(parsed)
    }
    socket.setTimeout(timeoutMs, finish)
    socket.on("data", (chunk: Buffer) => chunks.push(chunk))
    socket.on("error", (error) =>
      chunks.length > 0 ? finish() : resolve({ error: `${error.name}: ${error.message}` })
    )
    socket.on("end", finish)
    socket.on("connect", () => socket.end(Buffer.from(bytes)))
  })

/** HTTP/1.1 responses one after another, framed by Content-Length or chunked encoding. */
const parseResponses = (data: Buffer): ReadonlyArray<Answer> | { readonly error: string } => {
  const answers: Array<Answer> = []
  let at = 0
  while (at < data.length) {
    const end = data.indexOf("\r\n\r\n", at)
    if (end < 0) return { error: `an incomplete response head: ${data.subarray(at, at + 200).toString("latin1")}` }
    const [statusLine = "", ...lines] = data.subarray(at, end).toString("latin1").split("\r\n")
    const status = /^HTTP\/1\.[01] (\d{3})/.exec(statusLine)?.[1]
    if (status === undefined) return { error: `not a status line: ${statusLine.slice(0, 200)}` }
    const headers: Record<string, string> = {}
    for (const line of lines) {
      const colon = line.indexOf(":")
      const name = line.slice(0, colon).trim().toLowerCase()
      const value = line.slice(colon + 1).trim()
      headers[name] = headers[name] === undefined ? value : `${headers[name]}, ${value}`
    }
    at = end + 4
    let body: Buffer
    if (/chunked/i.test(headers["transfer-encoding"] ?? "")) {
      const parts: Array<Buffer> = []
      for (;;) {
        const lineEnd = data.indexOf("\r\n", at)
        if (lineEnd < 0) return { error: "a truncated chunked body" }
        const size = Number.parseInt(data.subarray(at, lineEnd).toString("latin1"), 16)
        at = lineEnd + 2
        if (Number.isNaN(size)) return { error: "a malformed chunk size" }
        if (size === 0) {
          at += 2
          break
        }
        parts.push(data.subarray(at, at + size))
        at += size + 2
      }
      body = Buffer.concat(parts)
    } else {
      const length = Number(headers["content-length"] ?? 0)
      body = data.subarray(at, at + length)
      at += length
    }
    answers.push({ status: Number(status), headers, body })
  }
  return answers
}
