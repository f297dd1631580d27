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
  /** Every setting read, in reading order, as `check` shows it: none when unset without a default. */
  const variables = new Map<string, Option.Option<string>>()
  const show = <A>(form: F.Form<A>, value: A, options: ReadOptions) => {
    const shown = (text: string) => shownText(text, options.secret === true)
    if (form.show !== undefined) return Option.some(shown(form.show(value)))
    return Option.some(
      Array.isArray(value) ? value.map((item) => shown(plainText(item))).join(",") : shown(plainText(value))
    )
  }

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

  /** `variable` read with `form`; a fault names it, and `check` shows the value as `setting`'s. */
  const readVariable = <A>(variable: string, form: F.Form<A>, options: ReadOptions = {}, setting = variable) => {
    const value = raw(variable, options.emptyIsValue)
    variables.set(setting, Option.none())
    if (value === undefined) return Option.none<A>()
    const read = form.read(value)
    if (Either.isLeft(read)) {
      const shown = options.secret === true ? "" : `=${JSON.stringify(withoutCredentials(value))}`
      problems.push(`${variable}${shown} ${read.left}; expected ${form.expected}`)
      return Option.none<A>()
    }
    variables.set(setting, show(form, read.right, options))
    return Option.some(read.right)
  }

  /** The variable a setting is read from: its own, or its unprefixed one when only that is set. */
  const source = (name: string, options: ReadOptions) =>
    options.unprefixed !== undefined &&
    raw(PREFIX + name, options.emptyIsValue) === undefined &&
    raw(options.unprefixed, options.emptyIsValue) !== undefined
      ? options.unprefixed
      : PREFIX + name

  const optional = <A>(name: string, form: F.Form<A>, options: ReadOptions = {}) => {
    describe(PREFIX + name, form.expected, undefined, options)
    return readVariable(source(name, options), form, options, PREFIX + name)
  }

  const reader: SettingsReader = {
    optional,
    standard: (name, form, options = {}) => {
      describe(name, form.expected, undefined, options)
      return readVariable(name, form, options)
    },
    setting: (name, form, fallback, options = {}) => {
      describe(PREFIX + name, form.expected, form.show?.(fallback) ?? showDefault(fallback), options)
      return Option.getOrElse(readVariable(source(name, options), form, options, PREFIX + name), () => {
        variables.set(PREFIX + name, show(form, fallback, options))
        return fallback
      })
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

  return { reader, problems, warnings, variables, unknownVariables, described, section }
}
