import { Either } from "effect"
import { hasControlCharacter } from "../domain/Text.js"

/**
 * The forms a setting's value may take. Each reads the raw environment string and answers the
 * value, or the fault in a few words; `expected` names the form for the error line.
 */
export interface Form<A> {
  readonly expected: string
  readonly read: (raw: string) => Either.Either<A, string>
  /** The value written back in this form, for `portcullis check`; plain values need none (reader.ts). */
  readonly show?: (value: A) => string
}

const form = <A>(expected: string, read: (raw: string) => Either.Either<A, string>): Form<A> => ({ expected, read })

export const text: Form<string> = form("a non-empty string", (raw) =>
  raw.trim() === "" ? Either.left("is empty") : Either.right(raw.trim())
)

/** Text shown to people (a product's name): one line, no control character. */
export const line: Form<string> = form("a non-empty line of text", (raw) => {
  if (raw.trim() === "") return Either.left("is empty")
  return hasControlCharacter(raw) ? Either.left("holds a control character") : Either.right(raw.trim())
})

const truthy = new Set(["true", "1", "yes"])
const falsy = new Set(["false", "0", "no"])
export const bool: Form<boolean> = form("true, false, 1, 0, yes or no", (raw) => {
  const value = raw.trim().toLowerCase()
  if (truthy.has(value)) return Either.right(true)
  if (falsy.has(value)) return Either.right(false)
  return Either.left("is not a boolean")
})

export const int = (min: number, max = Number.MAX_SAFE_INTEGER): Form<number> =>
  form(
    max === Number.MAX_SAFE_INTEGER ? `an integer of at least ${min}` : `an integer from ${min} to ${max}`,
    (raw) => {
      if (!/^[+-]?\d+$/.test(raw.trim())) return Either.left("is not an integer")
      const value = Number(raw.trim())
      return value < min || value > max ? Either.left("is out of range") : Either.right(value)
    }
  )

export const oneOf = <const A extends string>(...values: ReadonlyArray<A>): Form<A> =>
  form(`one of ${values.join(", ")}`, (raw) => {
    const value = raw.trim().toLowerCase()
    return (values as ReadonlyArray<string>).includes(value)
      ? Either.right(value as A)
      : Either.left("is not an accepted value")
  })

/** A list as CSV (`a,b`) or as a JSON array of strings (`["a","b"]`); blanks are dropped. */
export const list = <A>(item: Form<A>): Form<ReadonlyArray<A>> =>
  form<ReadonlyArray<A>>(`a comma-separated list or a JSON array of ${item.expected}`, (raw) => {
    const trimmed = raw.trim()
    let items: ReadonlyArray<unknown>
    if (trimmed.startsWith("[")) {
      try {
        const parsed: unknown = JSON.parse(trimmed)
        if (!Array.isArray(parsed)) return Either.left("is not a JSON array")
        items = parsed
      } catch {
        return Either.left("is not valid JSON")
      }
    } else {
      items = trimmed.split(",")
    }
    const values: Array<A> = []
    for (const entry of items) {
      if (typeof entry !== "string") return Either.left("has an entry that is not a string")
      if (entry.trim() === "") continue
      const value = item.read(entry)
      if (Either.isLeft(value)) return Either.left(`has an entry that ${value.left}`)
      values.push(value.right)
    }
    return Either.right(values)
  })

/** An absolute URL with one of the given schemes. */
export const url = (...protocols: ReadonlyArray<string>): Form<URL> =>
  form(`a URL starting with ${protocols.map((p) => `${p}//`).join(" or ")}`, (raw) => {
    try {
      const value = new URL(raw.trim())
      return protocols.includes(value.protocol) ? Either.right(value) : Either.left("has another scheme")
    } catch {
      return Either.left("is not a URL")
    }
  })

/** A browser origin: scheme, host and optional port, nothing else. */
export const origin: Form<string> = form("an origin such as https://app.example.com", (raw) => {
  try {
    const value = new URL(raw.trim())
    if (value.protocol !== "http:" && value.protocol !== "https:") return Either.left("is not an http(s) origin")
    if (value.origin !== raw.trim().replace(/\/$/, "")) return Either.left("has a path, query or credentials")
    return Either.right(value.origin)
  } catch {
    return Either.left("is not an origin")
  }
})

/** A bare domain name: no scheme, port or path. */
export const domain: Form<string> = form("a bare domain such as example.com", (raw) => {
  const value = raw.trim().toLowerCase()
  return /^(?=.{1,253}$)([a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)(\.[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)*$/.test(value)
    ? Either.right(value)
    : Either.left("is not a bare domain")
})

/** A path prefix: empty, or `/segment` repeated, without a trailing slash. */
export const pathPrefix: Form<string> = form("empty or a path such as /api/v1, without a trailing slash", (raw) => {
  const value = raw.trim()
  return value === "" || /^(\/[A-Za-z0-9._~-]+)+$/.test(value)
    ? Either.right(value)
    : Either.left("is not a path prefix")
})

export interface RateLimit {
  readonly count: number
  readonly windowSeconds: number
}

const windowSeconds: Record<string, number> = { second: 1, minute: 60, hour: 3600, day: 86_400 }

/** `<count>/<window>` with window second, minute, hour, day or `<n>s`: `5/minute`, `100/30s`. */
export const rateLimit: Form<RateLimit> = {
  expected: "<count>/<window> with window second, minute, hour, day or <n>s",
  show: ({ count, windowSeconds: seconds }) =>
    `${count}/${Object.keys(windowSeconds).find((unit) => windowSeconds[unit] === seconds) ?? `${seconds}s`}`,
  read: (raw) => {
    const match = /^\s*(\d+)\s*\/\s*(second|minute|hour|day|(\d+)s)\s*$/.exec(raw)
    if (match === null) return Either.left("is not a rate limit")
    const count = Number(match[1])
    const window = match[3] !== undefined ? Number(match[3]) : (windowSeconds[match[2] ?? ""] ?? 0)
    if (count < 1 || window < 1) return Either.left("must allow at least 1 request in at least 1 second")
    return Either.right({ count, windowSeconds: window })
  }
}

/** A JSON object mapping the names of `defaults` to `item` values; partial objects keep the other defaults. */
export const mapOf = <K extends string, A>(item: Form<A>, defaults: Readonly<Record<K, A>>) => {
  const names: ReadonlyArray<string> = Object.keys(defaults)
  const isName = (key: string): key is K => names.includes(key)
  const show = (value: Readonly<Record<K, A>>) =>
    JSON.stringify(
      Object.fromEntries(Object.entries<A>(value).map(([key, entry]) => [key, item.show?.(entry) ?? String(entry)]))
    )
  const read = form<Readonly<Record<K, A>>>(`a JSON object of ${names.join(", ")} to ${item.expected}`, (raw) => {
    let parsed: unknown
    try {
      parsed = JSON.parse(raw)
    } catch {
      return Either.left("is not valid JSON")
    }
    if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) {
      return Either.left("is not a JSON object")
    }
    const result: Record<K, A> = { ...defaults }
    for (const [key, value] of Object.entries(parsed)) {
      if (!isName(key)) return Either.left(`names ${key}, which is not one of them`)
      if (typeof value !== "string") return Either.left(`gives ${key} a value that is not a string`)
      const read = item.read(value)
      if (Either.isLeft(read)) return Either.left(`gives ${key} a value that ${read.left}`)
      result[key] = read.right
    }
    return Either.right(result)
  })
  return { ...read, show }
}

/** Any JSON value; its shape is checked by the setting that uses it. */
export const json: Form<unknown> = form("JSON", (raw) => {
  try {
    return Either.right(JSON.parse(raw))
  } catch {
    return Either.left("is not valid JSON")
  }
})
