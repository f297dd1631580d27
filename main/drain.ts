import { createServer, type Server } from "node:http"
import { Option } from "effect"
import type { Settings } from "../config/Settings.js"

/**
 * An HTTP server that counts the requests it finishes after it stopped listening: those that
 * were in flight when shutdown began (and any that came on their connections meanwhile), which
 * closing the server waits for.
 */
export const drainingServer = () => {
  let drained = 0
  const create = (): Server => {
    const server = createServer()
    server.on("request", (_request, response) => {
      response.once("close", () => {
        if (!server.listening) drained++
      })
    })
    return server
  }
  return { create, drained: () => drained }
}

/** What closing the service closed besides the server: its database, and Redis when it has one. */
const closedStores = ({ storage }: Settings) => {
  const database = {
    memory: "the in-memory store",
    sqlite: "the SQLite database",
    postgres: "the PostgreSQL pool"
  }[storage.databaseUrl.kind]
  return Option.isSome(storage.redisUrl) ? `${database} and Redis` : database
}

/** The line shutdown ends with, once everything is closed. */
export const stoppedLine = (settings: Settings, drained: number) =>
  `stopped: drained ${drained} in-flight request${drained === 1 ? "" : "s"}, closed ${closedStores(settings)}`
