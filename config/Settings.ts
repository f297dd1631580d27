import { Either, type Option } from "effect"
import { makeReader, type SettingDescription } from "./reader.js"
import { readAccounts } from "./sections/accounts.js"
import { readCookies } from "./sections/cookies.js"
import { readLimits } from "./sections/limits.js"
import { readLogging } from "./sections/logging.js"
import { readMail } from "./sections/mail.js"
import { readOAuth } from "./sections/oauth.js"
import { readObservability } from "./sections/observability.js"
import { readOidc } from "./sections/oidc.js"
import { readPasskeys } from "./sections/passkeys.js"
import { readServer } from "./sections/server.js"
import { readStorage } from "./sections/storage.js"
import { readTokens } from "./sections/tokens.js"
import { readWebhooks } from "./sections/webhooks.js"

/**
 * Every setting of the service, resolved, in sections (config/sections/, a file each with its
 * validation). Secrets stay redacted until the code that needs them.
 */
export interface Settings {
  readonly server: ReturnType<typeof readServer>
  readonly storage: ReturnType<typeof readStorage>
  readonly tokens: ReturnType<typeof readTokens>
  readonly cookies: ReturnType<typeof readCookies>
  readonly limits: ReturnType<typeof readLimits>
  readonly accounts: ReturnType<typeof readAccounts>
  readonly mail: ReturnType<typeof readMail>
  readonly oauth: ReturnType<typeof readOAuth>
  readonly oidc: ReturnType<typeof readOidc>
  readonly passkeys: ReturnType<typeof readPasskeys>
  readonly logging: ReturnType<typeof readLogging>
  readonly observability: ReturnType<typeof readObservability>
  readonly webhooks: ReturnType<typeof readWebhooks>
}

export interface ResolvedSettings {
  readonly settings: Settings
  /** Things that work but deserve the operator's attention, one sentence each. */
  readonly warnings: ReadonlyArray<string>
  /**
   * Every setting by its variable's name, in its environment form with secrets masked
   * (reader.ts shownText): none when unset without a default. What `portcullis check` prints.
   */
  readonly variables: ReadonlyMap<string, Option.Option<string>>
}

/**
 * Reads every setting from an environment. Answers all problems at once, one line each, naming
 * the variable, the value's fault and the expected form; a secret's value is never repeated.
 */
export const parseSettings = (
  env: Readonly<Record<string, string | undefined>>
): Either.Either<ResolvedSettings, ReadonlyArray<string>> => {
  const { settings, problems, warnings, variables } = readAll(env)
  return problems.length > 0 ? Either.left(problems) : Either.right({ settings, warnings, variables })
}

/** Every setting, described in the order and sections read: the source of docs/configuration.md. */
export const describeSettings = (): ReadonlyArray<SettingDescription> => readAll({}).described

const readAll = (env: Readonly<Record<string, string | undefined>>) => {
  const { problems, warnings, variables, unknownVariables, described, section } = makeReader(env)
  const storage = section("Storage", readStorage)
  const server = section("Server", (reader) => readServer(reader, storage))
  const tokens = section("Tokens", readTokens)
  const settings: Settings = {
    server,
    storage,
    tokens,
    cookies: section("Cookies", readCookies),
    limits: section("Lockout and rate limits", readLimits),
    accounts: section("Accounts", readAccounts),
    mail: section("Mail", readMail),
    oauth: section("Social sign-in (OAuth)", readOAuth),
    oidc: section("OpenID Provider", (reader) => readOidc(reader, server, tokens)),
    passkeys: section("Passkeys", (reader) => readPasskeys(reader, storage)),
    logging: section("Logging", readLogging),
    observability: section("Metrics and tracing", (reader) => readObservability(reader, server.port)),
    webhooks: section("Webhooks", readWebhooks)
  }
  unknownVariables()
  return { settings, problems, warnings, variables, described }
}
