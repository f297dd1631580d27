import { IncomingMessage } from "node:http"
import * as HttpServerError from "@effect/platform/HttpServerError"
import type * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import { Effect } from "effect"

/**
 * A request's body as text, read once from Node's request; the request then gives that text to
 * whatever reads it next (the route's decoding, through `text` and `json`). The platform's own
 * reader makes, for every body, a fiber run on the spot, a cached effect (a Deferred and a lock)
 * and a scoped read, a cost a cheap POST (refresh) pays on every request. Here it is one
 * callback. A request that is not Node's (a test's, made from
 * a web Request) is read by the platform.
 *
 * A body that cannot be read (the client broke the connection mid-body) is the same defect as the
 * platform's: a RequestError of reason "Decode". The length needs no limit here: the middleware
 * has refused a body longer than MAX_BODY_BYTES by its Content-Length, and Node's parser delivers
 * no more bytes than that.
 */
export const readBody = (request: HttpServerRequest.HttpServerRequest): Effect.Effect<string> => {
  const source = request.source
  if (!(source instanceof IncomingMessage)) return Effect.orDie(request.text)
  return Effect.async<string>((resume) => {
    const chunks: Array<Buffer> = []
    const onData = (chunk: Buffer) => chunks.push(chunk)
    const onEnd = () => {
      const text = Buffer.concat(chunks).toString("utf8")
      // An own property shadows the platform's getter: later readers get this text, not a second read.
      Object.defineProperty(request, "text", { value: Effect.succeed(text) })
      resume(Effect.succeed(text))
    }
    const onError = (cause: Error) =>
      resume(Effect.die(new HttpServerError.RequestError({ request, reason: "Decode", cause })))
    source.on("data", onData)
    source.once("end", onEnd)
    source.once("error", onError)
    return Effect.sync(() => {
      source.off("data", onData)
      source.off("end", onEnd)
      source.off("error", onError)
    })
  })
}
