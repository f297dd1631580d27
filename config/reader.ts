import { Either, Option, Redacted } from "effect"
import * as F from "./forms.js"

/** Every setting is read from an environment variable with this prefix. */
export const PREFIX = "SERVICE_"

export interface ReadOptions {
  /** The value is a secret: a problem line names the variable, never the value. */
  readonly secret?: boolean
  /** An empty variable is a value (the route prefixes), not an unset one. */
  readonly emptyIsValue?: boolean
  /**
   * A conventional variable without the prefix, read when the prefixed one is unset: `PORT`,
   * which hosting platforms set for the process to listen on. The prefixed one wins.
   */
  readonly unprefixed?: string
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

  const present = (variable: string, emptyIsValue: boolean) => {
    const value = env[variable]
    return value === "" && !emptyIsValue ? undefined : value
  }

  /** The variable that gives the setting its value, and that value; none when unset. */
  const raw = (name: string, options: ReadOptions) => {
    known.add(PREFIX + name)
    const emptyIsValue = options.emptyIsValue ?? false
    for (const variable of [PREFIX + name, ...(options.unprefixed === undefined ? [] : [options.unprefixed])]) {
      const value = present(variable, emptyIsValue)
      if (value !== undefined) return { variable, value }
    }
    return undefined
  }

  const optional = <A>(name: string, form: F.Form<A>, options: ReadOptions = {}) => {
    const found = raw(name, options)
    if (found === undefined) return Option.none<A>()
    const read = form.read(found.value)
    if (Either.isLeft(read)) {
      const shown = options.secret === true ? "" : `=${JSON.stringify(withoutCredentials(found.value))}`
      problems.push(`${found.variable}${shown} ${read.left}; expected ${form.expected}`)
      return Option.none<A>()
    }
    return Option.some(read.right)
  }

  const reader: SettingsReader = {
    optional,
    setting: (name, form, fallback, options) => Option.getOrElse(optional(name, form, options), () => fallback),
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

  return { reader, problems, warnings, unknownVariables }
}
