import { parseEnv } from "node:util"
import { Either } from "effect"
import { bool } from "./forms.js"

/** The file of settings read from the working directory, under the variables of the environment. */
export const DOTENV = ".env"

const assignment = /^\s*(?:export\s+)?[A-Za-z_][A-Za-z0-9_]*\s*=\s*(.*)$/
const quotes = new Set(['"', "'", "`"])

/**
 * The first line that is neither blank, a `#` comment, `NAME=value`, nor inside a quoted value
 * spanning lines. Node's parser takes such a line as part of the next variable's name, so that
 * variable would be lost without a word.
 */
const malformed = (text: string): string | undefined => {
  const lines = text.split(/\r?\n/)
  let open: { readonly quote: string; readonly line: number } | undefined
  for (const [index, line] of lines.entries()) {
    if (open !== undefined) {
      if (line.includes(open.quote)) open = undefined
      continue
    }
    const trimmed = line.trim()
    if (trimmed === "" || trimmed.startsWith("#")) continue
    const value = assignment.exec(line)?.[1]
    // The line is not repeated: it may hold a secret.
    if (value === undefined) return `${DOTENV} line ${index + 1} is not NAME=value or a # comment`
    const quote = value.charAt(0)
    if (quotes.has(quote) && !value.slice(1).includes(quote)) open = { quote, line: index + 1 }
  }
  return open === undefined
    ? undefined
    : `${DOTENV} line ${open.line} opens a ${open.quote}-quoted value that never closes`
}

/** The variables of a .env file's text, or the one sentence saying where it is malformed. */
export const parseDotenv = (text: string): Either.Either<Readonly<Record<string, string>>, string> => {
  const fault = malformed(text)
  if (fault !== undefined) return Either.left(fault)
  return Either.right(
    Object.fromEntries(
      Object.entries(parseEnv(text)).flatMap(([name, value]) => (value === undefined ? [] : [[name, value]]))
    )
  )
}

/** The variable that turns the .env file off, for test suites and hosts whose settings are all in the environment. */
export const IGNORE_DOTENV = "PORTCULLIS_IGNORE_DOTENV"

/**
 * Whether the .env file is left unread: under NODE_ENV=test or PORTCULLIS_IGNORE_DOTENV true, so
 * that a developer's .env cannot change a test's outcome. A value that is no boolean is refused
 * in a sentence rather than guessed at: read as false, it would bring back the file it meant to
 * turn off.
 */
export const dotenvIgnored = (
  environment: Readonly<Record<string, string | undefined>>
): Either.Either<boolean, string> => {
  const raw = environment[IGNORE_DOTENV]
  const ignored = raw === undefined || raw.trim() === "" ? Either.right(false) : bool.read(raw)
  return Either.match(ignored, {
    onLeft: (fault) => Either.left(`${IGNORE_DOTENV}=${JSON.stringify(raw)} ${fault}; expected ${bool.expected}`),
    onRight: (ignore) => Either.right(ignore || environment.NODE_ENV === "test")
  })
}

/** The .env file's variables that the environment leaves unset: one it sets, even empty, wins. */
export const unsetIn = (
  environment: Readonly<Record<string, string | undefined>>,
  dotenv: Readonly<Record<string, string>>
): Record<string, string> =>
  Object.fromEntries(Object.entries(dotenv).filter(([name]) => environment[name] === undefined))
