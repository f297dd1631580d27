import cluster from "node:cluster"
import { createServer } from "node:http"
import * as NodeHttpServer from "@effect/platform-node/NodeHttpServer"
import { Effect, Redacted, Runtime } from "effect"

const alive = () =>
  Object.values(cluster.workers ?? {}).flatMap((worker) => (worker === undefined || worker.isDead() ? [] : [worker]))

/**
 * WORKERS>1: this (primary) process forks `count` copies of itself that serve on the same port
 * (node:cluster hands them connections in turn), all with one SECRET_KEY, so a token any of them
 * issues is good on every other. A worker that dies is replaced; when the primary is told to
 * stop, it asks every worker to stop (each finishes its in-flight requests) and waits for them.
 */
export const superviseWorkers = (count: number, secretKey: Redacted.Redacted<string>) => {
  const env = { SERVICE_SECRET_KEY: Redacted.value(secretKey) }
  let stopping = false
  return Effect.acquireRelease(
    // The command's runtime, not the default one: the line is in LOG_FORMAT and carries `worker`.
    Effect.map(Effect.runtime<never>(), (runtime) => {
      cluster.on("exit", (worker, code, signal) => {
        if (stopping) return
        Runtime.runFork(runtime)(
          Effect.logWarning("a worker exited; starting another", {
            pid: worker.process.pid,
            exited_worker: worker.id,
            code,
            signal
          })
        )
        cluster.fork(env)
      })
      for (let i = 0; i < count; i++) cluster.fork(env)
    }),
    () =>
      Effect.async<void>((resume) => {
        stopping = true
        if (alive().length === 0) return resume(Effect.void)
        cluster.on("exit", () => {
          if (alive().length === 0) resume(Effect.void)
        })
        for (const worker of alive()) worker.process.kill("SIGTERM")
      })
  ).pipe(
    Effect.zipRight(Effect.logInfo("serving with workers", { workers: count })),
    Effect.zipRight(Effect.never),
    Effect.scoped
  )
}

export const isPrimary = () => cluster.isPrimary

/**
 * This process's `worker` in the log: 0 for the primary, else node:cluster's id (from 1; a
 * replacement gets the next unused one, so a restarted worker's lines are told apart too).
 */
export const workerId = () => cluster.worker?.id ?? 0

/** A server that serves nothing: every connection it is given is closed at once. */
const refusingConnections = () => {
  const server = createServer()
  server.on("connection", (socket) => socket.destroy())
  return server
}

/**
 * The primary's trial of the port, before any worker is started: the workers listen through the
 * primary, so a port it cannot take, none of them can, and each would fail and be replaced for
 * ever; tried first, it fails once, in a sentence. While the trial holds the port, a client (a
 * load balancer's probe) may connect: its connection is closed at once, since the trial serves
 * nothing and closing the trial waits for every open connection, which would hold the start for
 * ever.
 */
export const portTrial = (host: string, port: number) => NodeHttpServer.layer(refusingConnections, { host, port })
