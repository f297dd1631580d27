import { Either, type Option } from "effect"
import { makeReader } from "./reader.js"
import { readAccounts } from "./sections/accounts.js"
import { readCookies } from "./sections/cookies.js"
import { readLimits } from "./sections/limits.js"
import { readLogging } from "./sections/logging.js"
import { readMail } from "./sections/mail.js"
import { readOAuth } from "./sections/oauth.js"
import { readPasskeys } from "./sections/passkeys.js"
import { readServer } from "./sections/server.js"
import { readStorage } from "./sections/storage.js"
import { readTokens } from "./sections/tokens.js"

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
  readonly passkeys: ReturnType<typeof readPasskeys>
  readonly logging: ReturnType<typeof readLogging>
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
  const { reader, problems, warnings, variables, unknownVariables } = makeReader(env)
  const storage = readStorage(reader)
  const settings: Settings = {
    server: readServer(reader, storage),
    storage,
    tokens: readTokens(reader),
    cookies: readCookies(reader),
    limits: readLimits(reader),
    accounts: readAccounts(reader),
    mail: readMail(reader),
    oauth: readOAuth(reader),
    passkeys: readPasskeys(reader, storage),
    logging: readLogging(reader)
  }
  unknownVariables()
  return problems.length > 0 ? Either.left(problems) : Either.right({ settings, warnings, variables })
}
