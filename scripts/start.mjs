#!/usr/bin/env node
// `npm start` in a checkout: compiles when a source changed since the last build, then runs the
// CLI in this same process (arguments as given: `serve`). No prestart script and no wrapper
// process: npm hands SIGTERM and SIGINT to this process, which is the server, so they stop it.
import { build, isStale } from "./build.mjs"

if (isStale()) {
  process.stderr.write("portcullis: the sources changed since the last build; compiling\n")
  const status = build()
  if (status !== 0) process.exit(status)
}
await import("../dist/main/cli.js")
