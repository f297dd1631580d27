import { Either, Option, Redacted } from "effect"
import * as F from "./forms.js"

/** Every setting is read from an environment variable with this prefix. */
export const PREFIX = "SERVICE_"

export interface ReadOptions {
  /** The value is a secret: a problem line names the variable, never the value. */
  readonly secret?: boolean
  /** An empty variable is a value (the route prefixes), not an unset one. */
  readonly emptyIsValue?: boolean
  /** What the setting does, for the configuration reference (docs/configuration.md). */
  readonly doc?: string
  /** The default as the reference shows it, when its value does not speak for itself. */
  readonly shownDefault?: string
  /**
   * A conventional variable without the prefix, read when the prefixed one is unset: `PORT`,
   * which hosting platforms set for the process to listen on. The prefixed one wins.
   */
  readonly unprefixed?: string
}

/** One setting as the configuration reference describes it. */
export interface SettingDescription {
  readonly section: string
  readonly name: string
  readonly expected: string
  /** The default as shown; none for a setting that is unset unless given. */
  readonly shownDefault: string | undefined
  readonly secret: boolean
  readonly doc: string | undefined
}

/**
 * What a settings section reads the environment with. Problems and warnings are collected, not
 * thrown, so that start-up can answer every fault at once, one line each, naming the variable,
 * the value's fault and the expected form; a secret's value is never repeated.
 */
export interface SettingsReader {
  /** The setting's value, or none when unset or invalid (the fault is recorded). */
  readonly optional: <A>(name: string, form: F.Form<A>, options?: ReadOptions) => Option.Option<A>
  /**
   * A variable another standard names in full, read without the prefix (OpenTelemetry's
   * `OTEL_…`): none when unset or invalid (the fault is recorded).
   */
  readonly standard: <A>(name: string, form: F.Form<A>, options?: Pick<ReadOptions, "doc">) => Option.Option<A>
  /** The setting's value, or `fallback` when unset or invalid (the fault is recorded). */
  readonly setting: <A>(name: string, form: F.Form<A>, fallback: A, options?: ReadOptions) => A
  /** A secret text, redacted from here on. */
  readonly secret: (name: string, options?: Pick<ReadOptions, "doc">) => Option.Option<Redacted.Redacted<string>>
  /** A fault between settings, as a whole line. */
  readonly problem: (line: string) => void
  /** Something that works but deserves the operator's attention, as a whole line. */
  readonly warn: (line: string) => void
}

/** A value as it may be echoed in a problem line: any `user:password@` of a URL masked. */
const withoutCredentials = (value: string) => value.replace(/([a-z][a-z0-9+.-]*:\/*)[^/@\s]*@/gi, "$1<credentials>@")

/** A default as the reference shows it: URLs by their address, lists by their items. */
const showDefault = (value: unknown): string => {
  if (value instanceof URL) return value.href
  if (Array.isArray(value)) return value.length === 0 ? "none" : value.map(showDefault).join(", ")
  return String(value)
}

/**
 * A reader over `env`, and what it found: the problems, the warnings, the names it was asked
 * for (a `SERVICE_` variable nobody asked for is a typo, warned about by `unknownVariables`) and
 * every setting's description, in the order read, under the section being read (`section`).
 */
export const makeReader = (env: Readonly<Record<string, string | undefined>>) => {
  const problems: Array<string> = []
  const warnings: Array<string> = []
  const known = new Set<string>()
  const described: Array<SettingDescription> = []
  let currentSection = ""

  const describe = (variable: string, expected: string, shownDefault: string | undefined, options: ReadOptions) => {
    if (described.some((setting) => setting.name === variable)) return
    described.push({
      section: currentSection,
      name: variable,
      expected,
      shownDefault: options.shownDefault ?? shownDefault,
      secret: options.secret === true,
      doc: options.doc
    })
  }

  const raw = (variable: string, emptyIsValue = false): string | undefined => {
    known.add(variable)
    const value = env[variable]
    return value === "" && !emptyIsValue ? undefined : value
  }

  /** The value of the first of `variables` that is set, read with `form`; the fault names that variable. */
  const readVariable = <A>(variables: ReadonlyArray<string>, form: F.Form<A>, options: ReadOptions = {}) => {
    for (const variable of variables) {
      const value = raw(variable, options.emptyIsValue)
      if (value === undefined) continue
      const read = form.read(value)
      if (Either.isLeft(read)) {
        const shown = options.secret === true ? "" : `=${JSON.stringify(withoutCredentials(value))}`
        problems.push(`${variable}${shown} ${read.left}; expected ${form.expected}`)
        return Option.none<A>()
      }
      return Option.some(read.right)
    }
    return Option.none<A>()
  }

  /** The prefixed variable of a setting, then its conventional unprefixed one. */
  const variables = (name: string, options: ReadOptions) =>
    options.unprefixed === undefined ? [PREFIX + name] : [PREFIX + name, options.unprefixed]

  const optional = <A>(name: string, form: F.Form<A>, options: ReadOptions = {}) => {
    describe(PREFIX + name, form.expected, undefined, options)
    return readVariable(variables(name, options), form, options)
  }

  const reader: SettingsReader = {
    optional,
    standard: (name, form, options = {}) => {
      describe(name, form.expected, undefined, options)
      return readVariable([name], form, options)
    },
    setting: (name, form, fallback, options = {}) => {
      describe(PREFIX + name, form.expected, showDefault(fallback), options)
      return Option.getOrElse(readVariable(variables(name, options), form, options), () => fallback)
    },
    secret: (name, options = {}) =>
      optional(name, F.text, { ...options, secret: true }).pipe(Option.map(Redacted.make)),
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

  /** Reads one section of the settings, its descriptions filed under `title`. */
  const section = <A>(title: string, readSection: (reader: SettingsReader) => A): A => {
    currentSection = title
    return readSection(reader)
  }

  return { reader, problems, warnings, unknownVariables, described, section }
}
