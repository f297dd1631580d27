import { createConnection } from "node:net"
import * as HttpServer from "@effect/platform/HttpServer"
import { describe, expect, it } from "@effect/vitest"
import { Context, Effect, Exit, Layer, Scope } from "effect"
import { portTrial } from "../../main/workers.js"

/** What a client that sends a request on a new connection to `port` reads before the connection ends. */
const requestOn = (port: number) =>
  Effect.async<string>((resume) => {
    let answer = ""
    const socket = createConnection({ host: "127.0.0.1", port }, () =>
      socket.write("GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
    )
    socket.on("data", (chunk) => {
      answer += chunk
    })
    socket.on("error", () => undefined)
    socket.on("close", () => resume(Effect.succeed(answer)))
    return Effect.sync(() => socket.destroy())
  })

describe("the primary's trial of the port (WORKERS > 1)", () => {
  it.live("closes a connection made while it holds the port, answering nothing, and then lets go of the port", () =>
    Effect.gen(function* () {
      const scope = yield* Scope.make()
      const trial = yield* Layer.buildWithScope(portTrial("127.0.0.1", 0), scope)
      const { address } = Context.get(trial, HttpServer.HttpServer)
      if (address._tag !== "TcpAddress") return expect.fail("the trial has no TCP address")
      // A load balancer's probe arriving in the trial's moment: a server that served nothing but
      // kept the connection would hold it, and closing the trial would wait for it for ever.
      const read = yield* requestOn(address.port).pipe(Effect.timeout("3 seconds"))
      expect(read).toBe("")
      yield* Scope.close(scope, Exit.void).pipe(Effect.timeout("3 seconds"))
    })
  )
})
