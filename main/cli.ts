#!/usr/bin/env node
import * as NodeContext from "@effect/platform-node/NodeContext"
import * as NodeRuntime from "@effect/platform-node/NodeRuntime"
import { Effect } from "effect"
import { program } from "../interfaces/cli/program.js"
import * as Host from "./host.js"

/**
 * The process: `portcullis <command>`. The command line is the CLI's (interfaces/cli); what its
 * commands run over, the composition root, is given from here (Host).
 */
program(process.argv).pipe(
  Effect.provide(Host.layer),
  Effect.provide(NodeContext.layer),
  NodeRuntime.runMain({ disablePrettyLogger: true })
)
