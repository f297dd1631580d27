import { parseEnv } from "node:util"
import { Either } from "effect"

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

/** The .env file's variables that the environment leaves unset: one it sets, even empty, wins. */
export const unsetIn = (
  environment: Readonly<Record<string, string | undefined>>,
  dotenv: Readonly<Record<string, string>>
): Record<string, string> =>
  Object.fromEntries(Object.entries(dotenv).filter(([name]) => environment[name] === undefined))
