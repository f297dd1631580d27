import { createServer } from "node:http"
import { connect } from "node:net"
import * as HttpServer from "@effect/platform/HttpServer"
import * as HttpServerError from "@effect/platform/HttpServerError"
import * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import { NodeHttpServer } from "@effect/platform-node"
import { Cause, Effect, Exit, Layer, ManagedRuntime } from "effect"
import { describe, expect, it } from "vitest"

/**
 * A server whose one route reads the body as the pipeline's body checks do (the platform's `text`),
 * then as the route's decoding does (`json`, `text` again).
 */
const serve = async () => {
  const exits: Array<Exit.Exit<unknown, unknown>> = []
  const app = Effect.flatMap(HttpServerRequest.HttpServerRequest, (request) =>
    Effect.gen(function* () {
      const first = yield* request.text
      const json = yield* request.json
      const again = yield* request.text
      return yield* HttpServerResponse.json({ first, json, again })
    }).pipe(
      Effect.onExit((exit) => Effect.sync(() => exits.push(exit))),
      Effect.orDie
    )
  )
  const layer = HttpServer.serve(app).pipe(
    Layer.provideMerge(NodeHttpServer.layer(createServer, { host: "127.0.0.1", port: 0 }))
  )
  const runtime = ManagedRuntime.make(layer)
  const server = await runtime.runPromise(HttpServer.HttpServer)
  const port = (server.address as HttpServer.TcpAddress).port
  const close = () => runtime.dispose()
  return { port, close, exits }
}

/** Sends `parts` one after another (a pause between each), after a request head stating `length`. */
const sendInParts = (port: number, length: number, parts: ReadonlyArray<Buffer>, end: "complete" | "abort") =>
  new Promise<string>((resolve) => {
    const socket = connect(port, "127.0.0.1")
    let answer = ""
    socket.on("data", (data) => {
      answer += data.toString("utf8")
    })
    socket.on("close", () => resolve(answer))
    socket.on("error", () => resolve(answer))
    socket.write(
      `POST / HTTP/1.1\r\nHost: test\r\nContent-Type: application/json\r\nContent-Length: ${length}\r\nConnection: close\r\n\r\n`
    )
    const next = (index: number) => {
      const part = parts[index]
      if (part === undefined) {
        if (end === "abort") socket.destroy()
        return
      }
      socket.write(part, () => setTimeout(() => next(index + 1), 20))
    }
    next(0)
  })

describe("a body read over a Node socket", () => {
  it("joins a body sent in parts, a character split between them, and later readers get the same text", async () => {
    const server = await serve()
    try {
      const body = Buffer.from(JSON.stringify({ name: "Zoë 🦊 naïve" }), "utf8")
      const fox = body.indexOf(Buffer.from("🦊"))
      const answer = await sendInParts(
        server.port,
        body.length,
        [body.subarray(0, fox + 2), body.subarray(fox + 2, fox + 3), body.subarray(fox + 3)],
        "complete"
      )
      const json = JSON.parse(answer.slice(answer.indexOf("\r\n\r\n") + 4))
      expect(json).toEqual({
        first: body.toString("utf8"),
        json: { name: "Zoë 🦊 naïve" },
        again: body.toString("utf8")
      })
    } finally {
      await server.close()
    }
  })

  it("ends the reading when the client breaks off mid-body: a Decode failure or the request interrupted, never a wait", async () => {
    const server = await serve()
    try {
      await sendInParts(server.port, 100, [Buffer.from('{"name":')], "abort")
      await expect.poll(() => server.exits.length, { timeout: 2_000 }).toBe(1)
      const exit = server.exits[0]
      expect(exit !== undefined && Exit.isFailure(exit)).toBe(true)
      if (exit !== undefined && Exit.isFailure(exit)) {
        const failure = Cause.squash(exit.cause)
        const decodeFailure = failure instanceof HttpServerError.RequestError && failure.reason === "Decode"
        expect(decodeFailure || Cause.isInterruptedOnly(exit.cause)).toBe(true)
      }
    } finally {
      await server.close()
    }
  })
})
