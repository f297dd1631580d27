#!/usr/bin/env node
import * as NodeContext from "@effect/platform-node/NodeContext"
import * as NodeRuntime from "@effect/platform-node/NodeRuntime"
import { Effect } from "effect"
import { Invocation } from "../interfaces/cli/invocation.js"
import { program } from "../interfaces/cli/program.js"
import * as Host from "./host.js"

/**
 * The process: `portcullis <command>`. The command line is the CLI's (interfaces/cli); what its
 * commands run over, the composition root, is given from here (Host), and so is the process
 * itself (Invocation): its environment, which serve's workers inherit, streams and exit code.
 */
/**
 * A reader that stops early (`portcullis audit export | head`) closes the pipe: for a command that
 * prints, that is the end of its output, not a failure, so the process ends quietly with status 0.
 * serve's standard output is its log: a reader of that going away stays an error, which its
 * supervisor sees.
 */
if (process.argv.slice(2).find((arg) => !arg.startsWith("-")) !== "serve") {
  process.stdout.on("error", (error: NodeJS.ErrnoException) => {
    if (error.code !== "EPIPE") throw error
    process.exit(0)
  })
}

program(process.argv).pipe(
  Effect.provide(Host.layer),
  Effect.provideService(Invocation, {
    env: process.env,
    stdin: process.stdin,
    stdout: process.stdout,
    stderr: process.stderr,
    setExitCode: (code) => {
      process.exitCode = code
    }
  }),
  Effect.provide(NodeContext.layer),
  NodeRuntime.runMain({ disablePrettyLogger: true })
)
