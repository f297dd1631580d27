import { Command, Options } from "@effect/cli"
import { Console, DateTime, Effect, Option, Schema } from "effect"
import { Accounts } from "../../application/Accounts.js"
import { AddressChangeUndo } from "../../application/AddressChangeUndo.js"
import { Admin, type UserPage } from "../../application/Admin.js"
import type { UserFlags } from "../../application/ports/UserRepo.js"
import { normaliseEmail, type PublicUser, PublicUser as PublicUserSchema, toPublicUser } from "../../domain/User.js"
import { decodeId, decodeNewEmail, decodeUserRef, operate, userRefOption } from "./operator.js"
import { group } from "./output.js"
import { passwordOptions, readPassword } from "./password.js"
import { decodeRole, roleArg as role } from "./roles.js"
import { StartupError } from "./startup.js"

const encodeUser = Schema.encodeSync(PublicUserSchema)

/** A user as the API shows it: ids in the deployment's form, times in ISO 8601. */
const printUser = (user: PublicUser) => Console.log(JSON.stringify(encodeUser(user), null, 2))

const MAX_LIMIT = 1000

const list = Command.make(
  "list",
  {
    email: Options.text("email").pipe(
      Options.withPseudoName("START"),
      Options.optional,
      Options.withDescription("Only users whose email address starts with this text (letter case aside).")
    ),
    emailContains: Options.text("email-contains").pipe(
      Options.withPseudoName("PART"),
      Options.optional,
      Options.withDescription(
        "Only users whose email address contains this text (letter case aside); it reads every user."
      )
    ),
    limit: Options.integer("limit").pipe(
      Options.withDefault(50),
      Options.withDescription(`How many users to print, 1 to ${MAX_LIMIT}.`)
    ),
    after: Options.text("after").pipe(
      Options.withPseudoName("ID"),
      Options.optional,
      Options.withDescription("Only the users after this one: the next page starts where the last one said.")
    ),
    json: Options.boolean("json").pipe(
      Options.withDescription("Print {users, next_after} as JSON, users as the API shows them.")
    )
  },
  ({ email, emailContains, limit, after, json }) =>
    Effect.gen(function* () {
      if (!Number.isInteger(limit) || limit < 1 || limit > MAX_LIMIT) {
        return yield* new StartupError({ lines: [`--limit must be from 1 to ${MAX_LIMIT}`] })
      }
      const from = Option.isSome(after) ? { after: yield* decodeId(after.value, "--after") } : {}
      const page = yield* operate(
        Effect.flatMap(Admin, (admin) =>
          admin.listUsers({
            ...Option.match(email, {
              onNone: () => ({}),
              onSome: (start) => ({ emailStartsWith: normaliseEmail(start) })
            }),
            ...Option.match(emailContains, {
              onNone: () => ({}),
              onSome: (part) => ({ emailContains: normaliseEmail(part) })
            }),
            ...from,
            limit
          })
        )
      )
      yield* Console.log(json ? pageJson(page) : pageTable(page))
    })
).pipe(Command.withDescription(`List users, oldest first, a page at a time: id, email, flags, roles and created_at.`))

const pageJson = (page: UserPage) =>
  JSON.stringify(
    {
      users: page.users.map((user) => encodeUser(user)),
      next_after: Option.getOrNull(Option.map(page.nextAfter, String))
    },
    null,
    2
  )

const flagsOf = (user: PublicUser) =>
  [
    user.is_active ? "active" : "inactive",
    ...(user.is_verified ? ["verified"] : []),
    ...(user.is_superuser ? ["superuser"] : [])
  ].join(",")

/** Columns padded to their widest cell; a footer tells how to get the next page. */
const pageTable = (page: UserPage) => {
  if (page.users.length === 0) return "No users."
  const rows = [
    ["ID", "EMAIL", "FLAGS", "ROLES", "CREATED_AT"],
    ...page.users.map((user) => [
      String(user.id),
      user.email,
      flagsOf(user),
      user.roles.join(",") || "-",
      DateTime.formatIso(user.created_at)
    ])
  ]
  const widths = rows[0]?.map((_, column) => Math.max(...rows.map((row) => row[column]?.length ?? 0))) ?? []
  const lines = rows.map((row) =>
    row
      .map((cell, column) => cell.padEnd(widths[column] ?? 0))
      .join("  ")
      .trimEnd()
  )
  return Option.match(page.nextAfter, {
    onNone: () => lines,
    onSome: (next) => [...lines, `More users: --after ${next}`]
  }).join("\n")
}

const flag = (name: string, meaning: string) =>
  Options.choice(name, ["true", "false"]).pipe(Options.optional, Options.withDescription(meaning))

const update = Command.make(
  "update",
  {
    user: userRefOption,
    active: flag("active", "false deactivates the user: they cannot sign in, and all of their sessions end."),
    verified: flag("verified", "Whether the user's email address counts as verified."),
    superuser: flag("superuser", "Whether the user may use the admin routes."),
    newEmail: Options.text("new-email").pipe(
      Options.withPseudoName("EMAIL"),
      Options.optional,
      Options.withDescription(
        "Move the user to this address at once, verified on your word, for an owner who no longer reads the old one: every session ends, a pending address change is void, the old address is told. Refused when the address is taken or reserved by an address change's undo."
      )
    )
  },
  ({ user, active, verified, superuser, newEmail }) =>
    Effect.gen(function* () {
      const ref = yield* decodeUserRef(user)
      const to = Option.isSome(newEmail)
        ? Option.some(yield* decodeNewEmail(newEmail.value, "--new-email"))
        : Option.none()
      const asFlag = (value: Option.Option<"true" | "false">) =>
        Option.getOrUndefined(Option.map(value, (v) => v === "true"))
      const flags: UserFlags = Object.fromEntries(
        Object.entries({
          is_active: asFlag(active),
          is_verified: asFlag(verified),
          is_superuser: asFlag(superuser)
        }).filter(([, value]) => value !== undefined)
      )
      const updated = yield* operate(
        Effect.gen(function* () {
          const found = yield* (yield* Admin).findUser(ref)
          const moved = Option.isSome(to)
            ? yield* (yield* AddressChangeUndo).moveByOperator(found.email, to.value)
            : found
          return Object.keys(flags).length === 0
            ? toPublicUser(moved)
            : yield* (yield* Accounts).setFlags(moved.email, flags)
        })
      )
      yield* printUser(updated)
    })
).pipe(
  Command.withDescription(
    `Change a user's flags or address and print the user; deactivating or moving ends all of their sessions.`
  )
)

const setPassword = Command.make("set-password", { user: userRefOption, ...passwordOptions }, ({ user, ...password }) =>
  Effect.gen(function* () {
    const ref = yield* decodeUserRef(user)
    const found = yield* operate(
      Effect.gen(function* () {
        const found = yield* (yield* Admin).findUser(ref)
        const secret = yield* readPassword(password)
        yield* (yield* Accounts).setPassword(found.id, secret)
        return found
      })
    )
    yield* Console.log(`Set the password of ${found.email}; all of their sessions have ended.`)
  })
).pipe(
  Command.withDescription(
    `Set a user's password, as a password reset does: the password policy applies (SERVICE_PASSWORD_MIN_LENGTH, SERVICE_PASSWORD_MAX_LENGTH) and all of the user's sessions end. Without --password or --password-stdin, asks for it without showing it (twice).`
  )
)

const roleChange = (change: "add" | "remove", description: string) =>
  Command.make(change, { user: userRefOption, role }, ({ user, role }) =>
    Effect.gen(function* () {
      const ref = yield* decodeUserRef(user)
      const roleName = yield* decodeRole(role)
      const updated = yield* operate(
        Effect.gen(function* () {
          const admin = yield* Admin
          const found = yield* admin.findUser(ref)
          return yield* change === "add" ? admin.assignRole(found.id, roleName) : admin.removeRole(found.id, roleName)
        })
      )
      yield* printUser(updated)
    })
  ).pipe(Command.withDescription(description))

const roles = group("roles", [
  roleChange("add", "Give a user a role (created on first use) and print the user; it counts from their next request."),
  roleChange("remove", "Take a role from a user and print the user; a role they do not hold is no error.")
]).pipe(Command.withDescription("Give or take a user's roles."))

export const user = group("user", [list, update, setPassword, roles]).pipe(
  Command.withDescription("Operator commands on users: list them, change flags, set a password, manage roles.")
)
