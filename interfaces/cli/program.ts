import { Command, ValidationError } from "@effect/cli"
import { Effect } from "effect"
import { packageVersion } from "../../config/packageVersion.js"
import { createSuperuser, migrate } from "./admin.js"
import { audit } from "./audit.js"
import { client } from "./client.js"
import { fail, withInvocationConsole } from "./invocation.js"
import { keygen } from "./keygen.js"
import { RequestedLogLevel, takeLogLevel } from "./logLevel.js"
import { withColorWhereWanted, withHelpAtEveryLevel, withOwnHelp } from "./output.js"
import { prune } from "./prune.js"
import { resource } from "./resource.js"
import { role } from "./roles.js"
import { serve } from "./serve.js"
import { check, openapi, secret } from "./settings.js"
import { loadDotenv, StartupError } from "./startup.js"
import { user } from "./users.js"
import { webhook } from "./webhook.js"

const portcullis = Command.make("portcullis").pipe(
  Command.withSubcommands([
    serve,
    migrate,
    createSuperuser,
    user,
    role,
    audit,
    webhook,
    client,
    resource,
    prune,
    openapi,
    check,
    secret,
    keygen
  ]),
  Command.withDescription(
    "Portcullis: authentication and account service. Every command reads the SERVICE_ settings of its environment (README: Settings); `portcullis check` prints them. The commands that change or read records work on the stores serve uses (SERVICE_DATABASE_URL, SERVICE_REDIS_URL, SERVICE_USER_ID_TYPE), and may run while it serves."
  )
)

const run = Command.run(portcullis, { name: "portcullis", version: packageVersion })

/**
 * The command line `argv` (as process.argv gives it) parsed, run and answered: help, output, and
 * known failures as sentences on stderr with exit code 1; defects are the runtime's to report.
 * What the commands need of the program above (Host), of the process (Invocation) and of the
 * platform (NodeContext) is the caller's to give.
 */
export const program = (argv: ReadonlyArray<string>) => {
  const [executable = "node", script = "portcullis", ...args] = argv
  return loadDotenv.pipe(
    Effect.zipRight(takeLogLevel(args).pipe(Effect.mapError((problem) => new StartupError({ lines: [problem] })))),
    Effect.flatMap(({ level, args }) =>
      run([executable, script, ...withHelpAtEveryLevel(portcullis, args)]).pipe(
        Effect.provideService(RequestedLogLevel, level)
      )
    ),
    Effect.catchIf(ValidationError.isValidationError, () => fail([])),
    Effect.catchAll((error) =>
      error._tag === "StartupError"
        ? fail(error.lines)
        : // The HTTP problems tell a use case's refusal; only a command that ran one needs them.
          Effect.flatMap(
            Effect.promise(() => import("../http/problems.js")),
            ({ isErrorKind, problemOf }) =>
              isErrorKind(error) ? fail([problemOf(error).body.detail]) : Effect.die(error)
          )
    ),
    withOwnHelp,
    withColorWhereWanted,
    withInvocationConsole
  )
}
