import { createServer, type IncomingHttpHeaders, type ServerResponse } from "node:http"
import type { AddressInfo } from "node:net"
import { Effect } from "effect"

/** One request as the receiver read it, whole, before answering. */
export interface ReceivedRequest {
  /** The request's target: its path and any query string. */
  readonly path: string
  readonly headers: IncomingHttpHeaders
  /** The body, read to its end and decoded as UTF-8. */
  readonly body: string
}

/**
 * How the receiver answers one request: a status with an empty body, or a function given the
 * response to do with as a test needs (hold it open, redirect, write without end).
 */
export type Answer = number | ((response: ServerResponse) => void)

export interface WebhookReceiverOptions {
  /**
   * Decides the answer to each request once it is recorded; 200 when it gives none. Called in the
   * order the requests end, so a test may keep a count or a queue per path in it.
   */
  readonly answer?: (request: ReceivedRequest) => Answer | undefined
  /** The array to record into, for a suite that holds it before the receiver starts; a new one otherwise. */
  readonly received?: Array<ReceivedRequest>
}

export interface WebhookReceiver {
  /** `http://127.0.0.1:<port>`, without a trailing slash: a test adds the path it points at. */
  readonly base: string
  /** Every request so far, in the order their bodies ended. */
  readonly received: Array<ReceivedRequest>
  /** The paths of the requests whose connection closed before their answer was written in full. */
  readonly closedEarly: ReadonlyArray<string>
  /** Stops listening and drops every connection still open, a request held unanswered among them. */
  readonly close: () => Promise<void>
}

/**
 * A webhook receiver over real HTTP on 127.0.0.1, on a port the system picks, so that a test sees
 * what a deliverer actually sent: it records every request and answers as the test decides.
 */
export const startWebhookReceiver = async (options: WebhookReceiverOptions = {}): Promise<WebhookReceiver> => {
  const received = options.received ?? []
  const closedEarly: Array<string> = []
  const server = createServer((request, response) => {
    const chunks: Array<Buffer> = []
    request.on("data", (chunk: Buffer) => {
      chunks.push(chunk)
    })
    request.on("end", () => {
      const path = request.url ?? "/"
      const recorded: ReceivedRequest = { path, headers: request.headers, body: Buffer.concat(chunks).toString("utf8") }
      received.push(recorded)
      response.on("close", () => {
        if (!response.writableFinished) closedEarly.push(path)
      })
      const answer = options.answer?.(recorded)
      if (answer === undefined || typeof answer === "number") response.writeHead(answer ?? 200).end()
      else answer(response)
    })
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  return {
    base: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    received,
    closedEarly,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve())
        // A keep-alive connection, or a request held open on purpose, would keep close() waiting.
        server.closeAllConnections()
      })
  }
}

/** The receiver for the length of a scope: started when acquired, closed when the scope closes. */
export const webhookReceiver = (options?: WebhookReceiverOptions) =>
  Effect.acquireRelease(
    Effect.promise(() => startWebhookReceiver(options)),
    (receiver) => Effect.promise(() => receiver.close())
  )
