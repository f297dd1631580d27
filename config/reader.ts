import { Either, Option, Redacted } from "effect"
import * as F from "./forms.js"

/** Every setting is read from an environment variable with this prefix. */
export const PREFIX = "SERVICE_"

export interface ReadOptions {
  /** The value is a secret: a problem line names the variable, never the value. */
  readonly secret?: boolean
  /** An empty variable is a value (the route prefixes), not an unset one. */
  readonly emptyIsValue?: boolean
}

/**
 * What a settings section reads the environment with. Problems and warnings are collected, not
 * thrown, so that start-up can answer every fault at once, one line each, naming the variable,
 * the value's fault and the expected form; a secret's value is never repeated.
 */
export interface SettingsReader {
  /** The setting's value, or none when unset or invalid (the fault is recorded). */
  readonly optional: <A>(name: string, form: F.Form<A>, options?: ReadOptions) => Option.Option<A>
  /** The setting's value, or `fallback` when unset or invalid (the fault is recorded). */
  readonly setting: <A>(name: string, form: F.Form<A>, fallback: A, options?: ReadOptions) => A
  /** A secret text, redacted from here on. */
  readonly secret: (name: string) => Option.Option<Redacted.Redacted<string>>
  /** A fault between settings, as a whole line. */
  readonly problem: (line: string) => void
  /** Something that works but deserves the operator's attention, as a whole line. */
  readonly warn: (line: string) => void
}

/** A value in its environment form, for a form without `show`: URLs whole, structures as JSON. */
const plainText = (value: unknown): string =>
  value instanceof URL
    ? value.href
    : typeof value === "object" && value !== null
      ? JSON.stringify(value)
      : String(value)

const MASK = "***"

/**
 * A setting's text as `portcullis check` may print it: a URL's password masked wherever it is
 * (postgres://app:***@db/portcullis), and any other secret masked whole, but a secret URL's
 * user name, host and path stay readable.
 */
export const shownText = (text: string, secret: boolean): string => {
  const url = URL.canParse(text) ? new URL(text) : undefined
  if (url === undefined || url.host === "") return secret ? MASK : text
  if (url.password !== "") url.password = MASK
  else if (secret && url.username !== "") url.username = MASK
  else return text
  return url.href
}

/** A value as it may be echoed in a problem line: any `user:password@` of a URL masked. */
const withoutCredentials = (value: string) => value.replace(/([a-z][a-z0-9+.-]*:\/*)[^/@\s]*@/gi, "$1<credentials>@")

/**
 * A reader over `env`, and what it found: the problems, the warnings, and the names it was asked
 * for (a `SERVICE_` variable nobody asked for is a typo, warned about by `unknownVariables`).
 */
export const makeReader = (env: Readonly<Record<string, string | undefined>>) => {
  const problems: Array<string> = []
  const warnings: Array<string> = []
  const known = new Set<string>()
  /** Every setting read, in reading order, as `check` shows it: none when unset without a default. */
  const variables = new Map<string, Option.Option<string>>()
  const show = <A>(form: F.Form<A>, value: A, options: ReadOptions) => {
    const shown = (text: string) => shownText(text, options.secret === true)
    if (form.show !== undefined) return Option.some(shown(form.show(value)))
    return Option.some(
      Array.isArray(value) ? value.map((item) => shown(plainText(item))).join(",") : shown(plainText(value))
    )
  }

  const raw = (name: string, emptyIsValue = false): string | undefined => {
    known.add(PREFIX + name)
    const value = env[PREFIX + name]
    return value === "" && !emptyIsValue ? undefined : value
  }

  const optional = <A>(name: string, form: F.Form<A>, options: ReadOptions = {}) => {
    const value = raw(name, options.emptyIsValue)
    variables.set(PREFIX + name, Option.none())
    if (value === undefined) return Option.none<A>()
    const read = form.read(value)
    if (Either.isLeft(read)) {
      const shown = options.secret === true ? "" : `=${JSON.stringify(withoutCredentials(value))}`
      problems.push(`${PREFIX}${name}${shown} ${read.left}; expected ${form.expected}`)
      return Option.none<A>()
    }
    variables.set(PREFIX + name, show(form, read.right, options))
    return Option.some(read.right)
  }

  const reader: SettingsReader = {
    optional,
    setting: (name, form, fallback, options = {}) =>
      Option.getOrElse(optional(name, form, options), () => {
        variables.set(PREFIX + name, show(form, fallback, options))
        return fallback
      }),
    secret: (name) => optional(name, F.text, { secret: true }).pipe(Option.map(Redacted.make)),
    problem: (line) => void problems.push(line),
    warn: (line) => void warnings.push(line)
  }

  /** Warns about every `SERVICE_` variable no section read; call it once every section has read. */
  const unknownVariables = () => {
    for (const name of Object.keys(env)) {
      if (name.startsWith(PREFIX) && !known.has(name))
        warnings.push(`${name} is not a Portcullis setting and is ignored`)
    }
  }

  return { reader, problems, warnings, variables, unknownVariables }
}
