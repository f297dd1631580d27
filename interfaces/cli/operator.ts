import { Options } from "@effect/cli"
import { Effect, ParseResult, Schema } from "effect"
import type { UserRef } from "../../application/Admin.js"
import { NewEmail } from "../../domain/Address.js"
import { Email, UserId } from "../../domain/User.js"
import { Host } from "./host.js"
import { commandLogging } from "./logLevel.js"
import { loadSettings, StartupError } from "./startup.js"

/** An address naming a user already there: any stored one, look-alike or not, is found. */
export const decodeEmail = (value: string, option = "--email") =>
  Schema.decodeUnknown(Email)(value).pipe(
    Effect.mapError(() => new StartupError({ lines: [`${option} ${JSON.stringify(value)} is not an email address`] }))
  )

/**
 * An address entering through `option` (create-superuser, or a command giving a user a new
 * address): one that looks like no other (domain/Address.ts). The refusal names the rule, not
 * the value, whose invisible characters a terminal would not show.
 */
export const decodeNewEmail = (value: string, option = "--email") =>
  Effect.zipRight(
    decodeEmail(value, option),
    Schema.decodeUnknown(NewEmail)(value).pipe(
      Effect.mapError((error) => {
        const [issue] = ParseResult.ArrayFormatter.formatErrorSync(error)
        return new StartupError({ lines: [`${option} ${issue?.message ?? "is not an email address"}`] })
      })
    )
  )

export const decodeId = (value: string, option = "--id") =>
  Schema.decodeUnknown(UserId)(value.trim()).pipe(
    Effect.mapError(() => new StartupError({ lines: [`${option} is empty`] }))
  )

/** `--email` or `--id`: one of them names the user. */
export const userRefOption = Options.orElse(
  Options.text("email").pipe(
    Options.withPseudoName("EMAIL"),
    Options.withDescription("The user's email address (or give --id)."),
    Options.map((email) => ({ email }))
  ),
  Options.text("id").pipe(
    Options.withPseudoName("ID"),
    Options.withDescription("The user's id, as `user list` prints it (or give --email)."),
    Options.map((id) => ({ id }))
  )
)

export const decodeUserRef = (ref: { readonly email: string } | { readonly id: string }) =>
  "email" in ref
    ? Effect.map(decodeEmail(ref.email), (email): UserRef => ({ email }))
    : Effect.map(decodeId(ref.id), (id): UserRef => ({ id }))

/**
 * Runs an operator task over the deployment's adapters, once the settings are known to be
 * valid (before any prompt), as the CLI (the audit log's actor). Its logs stay quiet (warnings
 * and worse) unless --log-level asks for more.
 */
export const operate = <A, E, R>(task: Effect.Effect<A, E, R>) =>
  Effect.flatMap(loadSettings, ({ settings }) =>
    Effect.gen(function* () {
      const operations = yield* (yield* Host).operations(settings)
      return yield* Effect.provide(task, operations)
    }).pipe(Effect.scoped, Effect.provide(commandLogging(settings.logging, "warning")))
  )
