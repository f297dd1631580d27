import { Command } from "@effect/cli"
import { Effect } from "effect"
import { Host } from "./host.js"
import { deploymentOption } from "./loadDeployment.js"

const config = deploymentOption(
  "A deployment module (.js or .ts) whose default export is a Deployment: event handlers, custom user fields, password policy, custom claims, route groups."
)

// The HTTP stack and the stores are the Host's to load when serve runs, so that every other
// command, and --help, starts without them.
export const serve = Command.make("serve", { config }, ({ config }) =>
  Effect.flatMap(Host, (host) => host.serve(config))
).pipe(
  Command.withDescription(
    "Serve the HTTP API (npm start runs this): migrates SERVICE_DATABASE_URL, then listens on SERVICE_HOST:SERVICE_PORT with SERVICE_WORKERS processes. Every SERVICE_ setting applies; an invalid one stops start-up with one line each. --log-level overrides SERVICE_LOG_LEVEL."
  )
)
