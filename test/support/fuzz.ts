import { createHmac } from "node:crypto"
import fc from "fast-check"
import type { Answer } from "./rawHttp.js"

/**
 * Request fuzzing for a running service: its routes read from its own OpenAPI document, requests
 * generated against them (odd JSON, wrong types, odd headers, odd methods, protocol garbage), and
 * the rules every answer must keep. The generated requests name the pool's live credentials by
 * placeholder, filled in when they are sent, so that generation stays deterministic for a seed.
 */

type Schema = { readonly [key: string]: unknown }

interface OperationObject {
  readonly parameters?: ReadonlyArray<{ readonly name: string; readonly in: string; readonly schema?: Schema }>
  readonly requestBody?: { readonly content?: Record<string, { readonly schema?: Schema }> }
  readonly responses?: Record<string, unknown>
  readonly security?: ReadonlyArray<unknown>
}

export interface OpenApiDocument {
  readonly paths: Record<string, Record<string, OperationObject>>
  readonly components?: { readonly schemas?: Record<string, Schema> }
}

interface Parameter {
  readonly name: string
  readonly in: "path" | "query"
  readonly schema: Schema
}

/** One method of one path, as the document describes it. */
export interface Operation {
  readonly method: string
  /** A template: `/api/v1/auth/sessions/{family_id}`. */
  readonly path: string
  readonly parameters: ReadonlyArray<Parameter>
  readonly body: Schema | undefined
  readonly secured: boolean
  /** The statuses below 400 the document gives it. */
  readonly successes: ReadonlyArray<number>
}

const documentMethods = new Set(["get", "put", "post", "delete", "options", "head", "patch", "trace"])

/** Every operation of the document. */
export const operationsOf = (document: OpenApiDocument): ReadonlyArray<Operation> =>
  Object.entries(document.paths).flatMap(([path, item]) =>
    Object.entries(item)
      .filter(([method]) => documentMethods.has(method))
      .map(([method, operation]) => ({
        method: method.toUpperCase(),
        path,
        parameters: (operation.parameters ?? []).flatMap((parameter) =>
          parameter.in === "path" || parameter.in === "query"
            ? [{ name: parameter.name, in: parameter.in, schema: parameter.schema ?? {} }]
            : []
        ),
        body: operation.requestBody?.content?.["application/json"]?.schema,
        secured: (operation.security ?? []).length > 0,
        successes: Object.keys(operation.responses ?? {})
          .map(Number)
          .filter((status) => status < 400)
      }))
  )

/** The path of a request target as segments, read as the router reads them: case, `;`, `?` and extra slashes ignored. */
const segmentsOf = (target: string) =>
  (target.replace(/^[a-z][a-z0-9+.-]*:\/\/[^/]*/i, "").split(/[?;#]/)[0] ?? "")
    .split("/")
    .filter((segment) => segment !== "")
    .map((segment) => {
      try {
        return decodeURIComponent(segment).toLowerCase()
      } catch {
        return segment.toLowerCase()
      }
    })

/** The operations whose path template the target's path matches, whatever their method. */
const operationsAt = (operations: ReadonlyArray<Operation>, target: string) => {
  const segments = segmentsOf(target)
  return operations.filter((operation) => {
    const template = operation.path.split("/").filter((segment) => segment !== "")
    return (
      template.length === segments.length &&
      template.every((part, index) => /^\{.+\}$/.test(part) || part.toLowerCase() === segments[index])
    )
  })
}

// ---------------------------------------------------------------------------------------------
// Placeholders for the pool's credentials

/** What the pool holds for each of its sessions. */
export type SlotField = "access" | "refresh" | "email" | "userid" | "family" | "csrf"

const MARK = "\uE000"
const placeholderPattern = /\uE000(\w+):(\d+|self)\uE000/g

/**
 * A value of one of the pool's sessions, filled in when the request is sent; `self` is the
 * request's own session, so that its token, ids and cookies mostly belong together.
 */
const slotValue = (field: SlotField | "forged", slot: number | "self") => `${MARK}${field}:${slot}${MARK}`

const fill = (text: string, self: number, lookup: (field: string, slot: number) => string) =>
  text.replace(placeholderPattern, (_, field: string, slot: string) =>
    lookup(field, slot === "self" ? self : Number(slot))
  )

/** Which sessions a request names by placeholder. */
export const slotsNamed = (request: FuzzRequest): ReadonlySet<number> => {
  if (request.kind === "bytes") return new Set()
  const texts = [
    request.target,
    ...request.headers.map(([, value]) => value),
    typeof request.body === "string" ? request.body : "",
    request.claims ?? ""
  ]
  return new Set(
    texts.flatMap((text) =>
      [...text.matchAll(placeholderPattern)].map((match) => (match[2] === "self" ? request.self : Number(match[2])))
    )
  )
}

// ---------------------------------------------------------------------------------------------
// Generated requests

/** A request sent through an HTTP client: well-formed HTTP, any content. */
interface HttpFuzz {
  readonly kind: "http"
  readonly method: string
  readonly target: string
  /** Without Content-Length, which is added when the request is sent (after placeholders are filled). */
  readonly headers: ReadonlyArray<readonly [string, string]>
  readonly body: string | Uint8Array | undefined
  /** Sent with `Transfer-Encoding: chunked` instead of a Content-Length. */
  readonly chunked: boolean
  /** The claims of a token signed with the service's key when sent, for the `forged:0` placeholder. */
  readonly claims: string | undefined
  /** Path and query values as the service decodes them. */
  readonly parameters: ReadonlyArray<string>
  /** The pool session `self` placeholders name. */
  readonly self: number
}

/** Bytes written on a connection of their own: what no HTTP client sends. */
interface BytesFuzz {
  readonly kind: "bytes"
  /** Latin-1: one character a byte. */
  readonly bytes: string
}

export type FuzzRequest = HttpFuzz | BytesFuzz

export interface FuzzContext {
  readonly operations: ReadonlyArray<Operation>
  readonly schemas: Readonly<Record<string, Schema>>
  readonly authPrefix: string
  /** Sessions in the pool; the last one is a superuser's. */
  readonly slots: number
  /** Origins the service knows: PUBLIC_URL's and CORS_ORIGINS. */
  readonly origins: ReadonlyArray<string>
  /** The password every pool user signed up with. */
  readonly password: string
}

const weighted = <T>(...choices: ReadonlyArray<readonly [number, fc.Arbitrary<T>]>) =>
  fc.oneof(...choices.map(([weight, arbitrary]) => ({ weight, arbitrary })))

const hexChars = "0123456789abcdef".split("")
const hex = (length: number) => fc.array(fc.constantFrom(...hexChars), { minLength: length, maxLength: length })
const fresh = hex(10).map((chars) => chars.join(""))

/** NUL most of all: PostgreSQL refuses it in text. */
const controlChar = fc.oneof(
  fc.constant("\u0000"),
  fc.integer({ min: 1, max: 0x1f }).map((code) => String.fromCharCode(code)),
  fc.constant("\u007f")
)

/** Strings that have broken services before: bidi overrides, combining marks, astral and lone surrogates, loose emails. */
const notableStrings = [
  "\u202eevil\u202c",
  "\u0645\u0631\u062d\u0628\u0627",
  "\u05e9\u05dc\u05d5\u05dd",
  "e\u0301\u0302\u0303\u0304\u0305\u0306\u0307",
  "Z\u0364\u0351\u0353a\u0308\u0356l\u036e\u0352g\u030c\u0317o\u0319\u0354",
  "\u{1F600}\u{1F4A9}",
  "\u{1D518}\u{1D52B}\u{1D526}",
  "\u{10FFFF}",
  "\ufeff",
  "\u200b\u200c\u200d",
  "\u2028\u2029",
  "\uffff\ufffe",
  "\ud800",
  "\udc00",
  "a\ud800b",
  "\udbff\udfff",
  "jose\u0301@example.com",
  "jos\u00e9@example.com",
  "JOS\u00c9@EXAMPLE.COM",
  "a,b@evil.example",
  "Victim <b@evil.example>",
  "<b@evil.example>",
  '"quoted local"@example.com',
  "a@b",
  "@example.com",
  "a@",
  "a@@example.com",
  "a@example..com",
  " padded@example.com ",
  "a\u0000@example.com",
  "nul@example.com\u0000",
  "tab\t@example.com",
  "new\nline@example.com",
  "\u0000",
  "%00",
  "' OR '1'='1",
  "'; DROP TABLE users; --",
  "#{7*7}",
  "{{7*7}}",
  "<script>alert(1)</script>",
  "../../../etc/passwd",
  "\\",
  '"',
  "",
  " ",
  "\t\r\n"
]

/** Words the service's own messages may hold whatever is sent ("actual undefined"): never taken for an echo. */
const keywords = ["null", "true", "false", "undefined", "NaN", "Infinity", "constructor", "__proto__", "prototype"]

const repeated = fc
  .tuple(fc.constantFrom("a", "\u00e9", "\u{1F600}", "\u0000", "e\u0301", "<>"), fc.integer({ min: 100, max: 20_000 }))
  .map(([unit, count]) => unit.repeat(count))

const emailish = fc.oneof(
  fc.emailAddress(),
  fc
    .tuple(fc.string({ unit: "grapheme", maxLength: 12 }), fc.string({ unit: "grapheme", maxLength: 12 }))
    .map(([local, domain]) => `${local}@${domain}`),
  fc
    .tuple(fresh, controlChar, fc.constantFrom("local", "domain"))
    .map(([id, control, where]) =>
      where === "local" ? `fz${control}${id}@example.com` : `fz-${id}@exam${control}ple.com`
    ),
  fc.integer({ min: 60, max: 400 }).map((length) => `${"l".repeat(length)}@example.com`)
)

/** Strings no well-behaved client sends. */
const weirdString: fc.Arbitrary<string> = weighted(
  [2, fc.string({ maxLength: 24 })],
  [2, fc.string({ unit: "binary", maxLength: 24 })],
  [1, fc.string({ unit: "grapheme-composite", maxLength: 12 })],
  [
    4,
    fc
      .tuple(fc.string({ maxLength: 8 }), controlChar, fc.string({ maxLength: 8 }))
      .map(([before, control, after]) => before + control + after)
  ],
  [3, fc.constantFrom(...notableStrings)],
  [1, repeated],
  [3, emailish]
)

const wrongType: fc.Arbitrary<unknown> = fc.oneof(
  fc.integer(),
  fc.double(),
  fc.boolean(),
  fc.constant(null),
  fc.array(fc.string({ maxLength: 6 }), { maxLength: 3 }),
  fc.dictionary(fc.string({ maxLength: 6 }), fc.string({ maxLength: 6 }), { maxKeys: 3 }),
  fc.constant({}),
  fc.constant([])
)

const weirdValue: fc.Arbitrary<unknown> = weighted([4, weirdString], [3, wrongType], [1, fc.jsonValue({ maxDepth: 3 })])

const jwtish = fc.oneof(
  fc
    .tuple(fc.base64String({ maxLength: 40 }), fc.base64String({ maxLength: 80 }), fc.base64String({ maxLength: 44 }))
    .map((parts) => parts.map((part) => part.replace(/[+/=]/g, "")).join(".")),
  fc.constantFrom("", "a.b.c", "..", "eyJhbGciOiJub25lIn0.e30.", "not a token"),
  weirdString
)

const slotOf = (context: FuzzContext) =>
  weighted<number | "self">([3, fc.constant("self")], [1, fc.nat(context.slots - 1)])
const slot = (context: FuzzContext, field: SlotField) => slotOf(context).map((index) => slotValue(field, index))
const freshEmail = fresh.map((id) => `fz-${id}@example.com`)

/** Values the service may accept, for fields it knows by name: the pool's own credentials among them. */
const knownField = (context: FuzzContext, name: string): fc.Arbitrary<unknown> | undefined => {
  if (/^(email|login|identifier|username)$/i.test(name)) {
    return weighted([4, slot(context, "email")], [3, freshEmail], [2, emailish], [1, weirdString])
  }
  if (/password/i.test(name))
    return weighted([3, fc.constant(context.password)], [1, fc.string({ minLength: 10, maxLength: 40 })])
  if (name === "refresh_token") return fc.oneof(slot(context, "refresh"), jwtish)
  if (name === "user_id") return fc.oneof(slot(context, "userid"), fc.uuid(), fc.nat().map(String))
  if (name === "family_id") return fc.oneof(slot(context, "family"), fc.uuid())
  if (/token/i.test(name)) return fc.oneof(slot(context, "access"), jwtish)
  return undefined
}

const resolve = (context: FuzzContext, schema: Schema): Schema => {
  const ref = schema.$ref
  if (typeof ref !== "string") return schema
  const target = context.schemas[ref.replace("#/components/schemas/", "")]
  return target === undefined ? {} : resolve(context, target)
}

const patternString = (pattern: string) => {
  try {
    return fc.stringMatching(new RegExp(pattern))
  } catch {
    return fc.string({ maxLength: 16 })
  }
}

/** A value the schema accepts, or close to it. */
const plausible = (context: FuzzContext, raw: Schema, name = ""): fc.Arbitrary<unknown> => {
  const known = knownField(context, name)
  if (known !== undefined) return known
  const schema = resolve(context, raw)
  const members = (schema.anyOf ?? schema.oneOf) as ReadonlyArray<Schema> | undefined
  if (members !== undefined && members.length > 0) return fc.oneof(...members.map((m) => plausible(context, m, name)))
  if (Array.isArray(schema.enum) && schema.enum.length > 0) return fc.constantFrom(...(schema.enum as Array<unknown>))
  if ("const" in schema) return fc.constant(schema.const)
  switch (schema.type) {
    case "string": {
      if (schema.format === "uuid") return fc.uuid()
      if (schema.format === "email") return freshEmail
      if (typeof schema.pattern === "string") return patternString(schema.pattern)
      const minLength = typeof schema.minLength === "number" ? schema.minLength : 0
      const maxLength = Math.max(minLength, Math.min(typeof schema.maxLength === "number" ? schema.maxLength : 32, 32))
      return fc.string({ minLength, maxLength })
    }
    case "integer":
      return fc.integer({
        min: typeof schema.minimum === "number" ? schema.minimum : 0,
        max: typeof schema.maximum === "number" ? schema.maximum : 1_000_000
      })
    case "number":
      return fc.double({ noNaN: true, noDefaultInfinity: true })
    case "boolean":
      return fc.boolean()
    case "null":
      return fc.constant(null)
    case "array":
      return fc.array(plausible(context, (schema.items as Schema | undefined) ?? {}), { maxLength: 3 })
    case "object": {
      const properties = (schema.properties ?? {}) as Record<string, Schema>
      const required = new Set((schema.required ?? []) as ReadonlyArray<string>)
      const entries = Object.entries(properties).map(([key, property]) => {
        const value = plausible(context, property, key)
        return [key, required.has(key) ? value : fc.option(value, { nil: undefined, freq: 2 })] as const
      })
      return fc
        .tuple(...entries.map(([, arbitrary]) => arbitrary))
        .map((values) =>
          Object.fromEntries(
            entries.flatMap(([key], index) => (values[index] === undefined ? [] : [[key, values[index]]]))
          )
        )
    }
    default:
      return fc.jsonValue({ maxDepth: 2 })
  }
}

/** The field names a body schema declares. */
const fieldsOf = (context: FuzzContext, body: Schema | undefined) =>
  Object.keys((body === undefined ? {} : resolve(context, body)).properties ?? {})

const unknownFields = [
  "is_superuser",
  "is_active",
  "is_verified",
  "roles",
  "permissions",
  "hashed_password",
  "id",
  "created_at"
]

/** An object with an own `__proto__` key, which JSON.stringify writes out like any other. */
const withOwn = (object: Record<string, unknown>, key: string, value: unknown) => {
  const copy = { ...object }
  Object.defineProperty(copy, key, { value, enumerable: true, configurable: true, writable: true })
  return copy
}

type Mutation = (object: Record<string, unknown>) => Record<string, unknown>

const mutation = (fields: ReadonlyArray<string>): fc.Arbitrary<Mutation> => {
  const field = fields.length === 0 ? fc.string({ maxLength: 8 }) : fc.constantFrom(...fields)
  return weighted<Mutation>(
    [
      4,
      fc.tuple(field, weirdValue).map(
        ([key, value]): Mutation =>
          (object) =>
            withOwn(object, key, value)
      )
    ],
    [
      1,
      field.map(
        (key): Mutation =>
          (object) =>
            Object.fromEntries(Object.entries(object).filter(([name]) => name !== key))
      )
    ],
    [
      1,
      fc.tuple(fc.oneof(fc.constantFrom(...unknownFields, "__proto__"), fc.string({ maxLength: 12 })), weirdValue).map(
        ([key, value]): Mutation =>
          (object) =>
            withOwn(object, key, value)
      )
    ],
    [
      1,
      fc.tuple(field, fc.integer({ min: 2, max: 60 })).map(
        ([key, depth]): Mutation =>
          (object) =>
            withOwn(object, key, nestedValue(depth, object[key] ?? "x"))
      )
    ]
  )
}

const nestedValue = (depth: number, leaf: unknown) => {
  let value = leaf
  for (let level = 0; level < depth; level++) value = level % 2 === 0 ? [value] : { a: value }
  return value
}

const stringify = (value: unknown) => JSON.stringify(value) ?? "null"

const badLiterals = [
  '"\\x"',
  '"\\u12"',
  '"\\uZZZZ"',
  '"\\ud800"',
  '"\\udc00\\ud800"',
  '"\\u0000"',
  '"a\\u0000b"',
  "1e400",
  "-1e400",
  "-0",
  "123456789012345678901234567890123456789",
  "1e-400",
  "NaN",
  "Infinity",
  "undefined",
  "'single'",
  "0x10",
  "01",
  "+1",
  ".5",
  "1.",
  "tru",
  "nul",
  '"unterminated',
  "[1,]",
  "{}",
  "[]",
  '{"$gt": ""}',
  '{"$ne": null}'
]

const trailing = ["x", "}", ",", " {}", "\u0000", "]]", " // comment", '\n{"a":1}', " /* c */", "\ufeff"]

const wholeTexts = [
  "",
  " ",
  "\n\t ",
  "{",
  "[",
  '"',
  "nul",
  "tru",
  "{,}",
  '{"a":}',
  '{"a" 1}',
  '{"a":1,,"b":2}',
  "{'email': 'x'}",
  "{email: 1}",
  "null",
  "true",
  "0",
  "-0",
  "1e400",
  '"text"',
  '"\\ud800"',
  "[]",
  "{}",
  '{"__proto__": {"is_superuser": true}}',
  '{"constructor": {"prototype": {"is_superuser": true}}}',
  '{"":""}',
  '{"a":1}{"a":2}'
]

/** JSON text that is not JSON, or JSON that parsers disagree on. */
const malformedText = (objects: fc.Arbitrary<Record<string, unknown>>, fields: ReadonlyArray<string>) => {
  const field = fields.length === 0 ? fc.string({ maxLength: 8 }) : fc.constantFrom(...fields)
  const base = objects.map(stringify)
  return fc.oneof(
    base.chain((text) => fc.nat(Math.max(0, text.length - 1)).map((cut) => text.slice(0, cut))),
    fc.tuple(base, fc.constantFrom(...trailing)).map(([text, tail]) => text + tail),
    fc.tuple(objects, field, fc.constantFrom(...badLiterals)).map(([object, key, literal]) => {
      const others = stringify(Object.fromEntries(Object.entries(object).filter(([name]) => name !== key)))
      return `{${JSON.stringify(key)}: ${literal}${others === "{}" ? "}" : `, ${others.slice(1)}`}`
    }),
    fc
      .tuple(field, weirdString, weirdString)
      .map(
        ([key, first, second]) =>
          `{${JSON.stringify(key)}:${stringify(first)},${JSON.stringify(key)}:${stringify(second)}}`
      ),
    fc.tuple(field, controlChar).map(([key, control]) => `{${JSON.stringify(key)}:"raw${control}control"}`),
    base.map((text) => `\ufeff${text}`),
    fc.constantFrom(...wholeTexts),
    fc
      .integer({ min: 1000, max: 6000 })
      .map((count) => stringify(Object.fromEntries(Array.from({ length: count }, (_, index) => [`k${index}`, index])))),
    fc.integer({ min: 1000, max: 20_000 }).map((count) => `[${Array.from({ length: count }, () => "0").join(",")}]`)
  )
}

const depths = [31, 32, 33, 34, 40, 64, 100, 1000, 10_000, 30_000]

/** Nesting past any sane depth: arrays, objects, mixed, unclosed, inside a field. */
const deepText = (fields: ReadonlyArray<string>) =>
  fc
    .tuple(
      fc.oneof(fc.constantFrom(...depths), fc.integer({ min: 1, max: 200 })),
      fc.constantFrom("array", "object", "mixed", "unclosed"),
      fields.length === 0 ? fc.constant(undefined) : fc.option(fc.constantFrom(...fields), { nil: undefined })
    )
    .map(([depth, shape, field]) => {
      const open = shape === "array" || shape === "unclosed" ? "[" : shape === "object" ? '{"a":' : '[{"a":'
      const close = shape === "array" ? "]" : shape === "object" ? "}" : shape === "mixed" ? "}]" : ""
      const levels = shape === "mixed" ? Math.ceil(depth / 2) : depth
      const value = `${open.repeat(levels)}1${close.repeat(levels)}`
      return field === undefined ? value : `{${JSON.stringify(field)}:${value}}`
    })

/** Bodies of an exact size around the 64 KiB limit, the bulk in one string field. */
const hugeText = (objects: fc.Arbitrary<Record<string, unknown>>, fields: ReadonlyArray<string>) =>
  fc
    .tuple(
      objects,
      fields.length === 0 ? fc.constant("padding") : fc.constantFrom(...fields),
      fc.oneof(fc.constantFrom(65_535, 65_536, 65_537, 70_000), fc.integer({ min: 1024, max: 65_536 }))
    )
    .map(([object, key, size]) => {
      const skeleton = stringify(withOwn(object, key, ""))
      const room = size - new TextEncoder().encode(skeleton).length
      return stringify(withOwn(object, key, "p".repeat(Math.max(0, room))))
    })

const binaryBody = fc.uint8Array({ minLength: 1, maxLength: 512 })

const formBodies = fc.constantFrom(
  "email=a%40example.com&password=x",
  '--x\r\nContent-Disposition: form-data; name="email"\r\n\r\na@example.com\r\n--x--\r\n',
  "<xml/>",
  "plain text"
)

/** Body text for an operation, its schema's fields in the lead. */
const bodyFor = (context: FuzzContext, operation: Operation | undefined): fc.Arbitrary<string | Uint8Array> => {
  const schema = operation?.body
  const fields = fieldsOf(context, schema)
  const objects: fc.Arbitrary<Record<string, unknown>> =
    schema === undefined
      ? fc.dictionary(fc.string({ maxLength: 8 }), fc.jsonValue({ maxDepth: 2 }), { maxKeys: 3 })
      : plausible(context, schema).map((value) =>
          typeof value === "object" && value !== null && !Array.isArray(value)
            ? (value as Record<string, unknown>)
            : { value }
        )
  const mutated = fc
    .tuple(objects, fc.array(mutation(fields), { minLength: 1, maxLength: 3 }))
    .map(([object, changes]) => stringify(changes.reduce((value, change) => change(value), object)))
  return weighted<string | Uint8Array>(
    [10, objects.map(stringify)],
    [10, mutated],
    [3, fc.jsonValue({ maxDepth: 4 }).map(stringify)],
    [5, deepText(fields)],
    [8, malformedText(objects, fields)],
    [2, hugeText(objects, fields)],
    [1, binaryBody],
    [1, formBodies]
  )
}

const jsonTypes = [
  "application/json",
  "application/json; charset=utf-8",
  "application/json;charset=UTF-8",
  "APPLICATION/JSON",
  "application/problem+json",
  "application/vnd.api+json"
]
const otherTypes = [
  "text/plain",
  "text/plain; charset=utf-8",
  "application/x-www-form-urlencoded",
  "multipart/form-data; boundary=x",
  "application/jsonx",
  "application/json-patch",
  "application/json, text/plain",
  "json",
  "application/",
  "",
  "application/json; charset=utf-16",
  "*/*"
]

/** Percent-encodes every byte of the UTF-8 form but the unreserved ones (lone surrogates become U+FFFD). */
const percentEncode = (value: string) =>
  [...new TextEncoder().encode(value)]
    .map((byte) =>
      /[A-Za-z0-9\-._~]/.test(String.fromCharCode(byte))
        ? String.fromCharCode(byte)
        : `%${byte.toString(16).toUpperCase().padStart(2, "0")}`
    )
    .join("")

/** Percent-encoded, but for the placeholders in it, which are filled with URL-safe values. */
const encodeKeeping = (value: string) =>
  value
    .split(/(\uE000\w+:(?:\d+|self)\uE000)/)
    .map((part, index) => (index % 2 === 1 ? part : percentEncode(part)))
    .join("")

/** What the service decodes an encoded value to. */
const decoded = (value: string) => new TextDecoder().decode(new TextEncoder().encode(value))

/** Escapes that decode to nothing valid: overlong, surrogate halves, stray bytes, broken escapes. */
const brokenEscapes = ["%ED%A0%80", "%C0%80", "%FF", "%E2%82", "%", "%z", "%%", "%0", "%2F", "%2e%2e", "%00", "%0A"]

interface Target {
  readonly operation: Operation | undefined
  readonly target: string
  readonly parameters: ReadonlyArray<string>
}

const parameterValue = (context: FuzzContext, parameter: Parameter) =>
  weighted<{ readonly encoded: string; readonly value: string | undefined }>(
    [
      6,
      plausible(context, parameter.schema, parameter.name).map((value) => {
        const text = typeof value === "string" ? value : stringify(value)
        return { encoded: encodeKeeping(text), value: decoded(text) }
      })
    ],
    [4, weirdString.map((text) => ({ encoded: percentEncode(text), value: decoded(text) }))],
    [
      1,
      fc
        .tuple(fc.string({ maxLength: 6 }), fc.constantFrom(...brokenEscapes))
        .map(([text, broken]) => ({ encoded: `${percentEncode(text)}${broken}`, value: undefined }))
    ]
  )

/** The operation's path with its parameters filled in, and maybe a query. */
const documentedTarget = (context: FuzzContext, operation: Operation): fc.Arbitrary<Target> =>
  fc.tuple(...operation.parameters.map((parameter) => parameterValue(context, parameter))).map((values) => {
    let path = operation.path
    const query: Array<string> = []
    operation.parameters.forEach((parameter, index) => {
      const encoded = values[index]?.encoded ?? ""
      if (parameter.in === "path") path = path.replace(`{${parameter.name}}`, encoded)
      else query.push(`${percentEncode(parameter.name)}=${encoded}`)
    })
    return {
      operation,
      target: query.length === 0 ? path : `${path}?${query.join("&")}`,
      parameters: values.flatMap((value) => (value?.value === undefined ? [] : [value.value]))
    }
  })

/** Another spelling of a route: what routers and limiters have read differently. */
const variant = (target: Target) =>
  fc
    .constantFrom(
      (path: string) => `${path}/`,
      (path: string) => path.replace(/\//g, "//"),
      (path: string) => path.toUpperCase(),
      (path: string) => `${path};jsessionid=x`,
      (path: string) => `${path}?a=1&a=2&%zz=%`,
      (path: string) => `${path}#fragment`,
      (path: string) => path.replace(/\/([^/]+)$/, "/./$1"),
      (path: string) => path.replace(/\/([^/]+)$/, "/x/../$1"),
      (path: string) => path.replace(/[a-z]/, (letter) => `%${letter.charCodeAt(0).toString(16)}`),
      (path: string) => `http://evil.example${path}`,
      (path: string) => path.replace(/\/([^/]+)$/, "%2F$1")
    )
    .map((spell) => ({ ...target, target: spell(target.target) }))

const unknownTarget = (context: FuzzContext) =>
  fc
    .tuple(
      fc.constantFrom("", "/", context.authPrefix),
      fc.array(fc.oneof(weirdString.map(percentEncode), fc.constantFrom("..", ".", "admin", "me", "%00")), {
        minLength: 1,
        maxLength: 4
      })
    )
    .map(
      ([prefix, segments]): Target => ({
        operation: undefined,
        target: `${prefix}/${segments.join("/")}`,
        parameters: []
      })
    )

const otherMethods = ["GET", "POST", "PUT", "PATCH", "DELETE", "HEAD", "OPTIONS", "TRACE", "PROPFIND", "PURGE", "FOO"]

const bearerGarbage = (context: FuzzContext) =>
  fc.oneof(
    fc.constantFrom("Bearer", "Bearer ", "Bearer  ", "Basic dXNlcjpwYXNz", "Token abc", "Bearer a.b.c", "Bearer null"),
    slot(context, "access").map((token) => `bearer ${token}`),
    slot(context, "access").map((token) => `Bearer ${token}x`),
    slot(context, "access").map((token) => `Bearer ${token}, Bearer ${token}`),
    slot(context, "refresh").map((token) => `Bearer ${token}`),
    jwtish.map((token) => `Bearer ${token}`),
    fc.string({ unit: "binary-ascii", maxLength: 60 }).map((text) => `Bearer ${latin1(text)}`),
    fc
      .tuple(fc.constantFrom("A", "eyJ", "\u00e9", "."), fc.integer({ min: 1000, max: 15_000 }))
      .map(([unit, count]) => `Bearer ${unit.repeat(Math.floor(count / unit.length))}`)
  )

/** A header value Node will send: tab, printable ASCII and Latin-1 only; the rest is replaced when sent. */
const latin1 = (text: string) => text.replace(/[^\t\x20-\x7e\xa0-\xff]/g, "?")

const claimsArbitrary = (context: FuzzContext) =>
  fc.record(
    {
      sub: fc.oneof(slot(context, "userid"), weirdString, fc.integer(), fc.constant(null)),
      exp: fc.oneof(fc.constant(4_102_444_800), fc.constantFrom(0, -1, 1e308, "soon"), wrongType),
      iat: fc.oneof(fc.constant(1_700_000_000), wrongType),
      jti: fc.oneof(fc.uuid(), weirdString),
      type: fc.oneof(fc.constantFrom("access", "refresh", "verify_email", "password_reset", "oauth_state"), weirdValue),
      roles: fc.oneof(fc.constant([]), fc.constant(["admin"]), weirdValue),
      extra: fc.oneof(fc.constant({}), weirdValue),
      family_id: fc.oneof(slot(context, "family"), fc.uuid(), weirdValue),
      iss: fc.oneof(fc.constant("portcullis"), weirdString),
      aud: weirdValue
    },
    { requiredKeys: [] }
  )

/** Client addresses: a few that recur (so that limits are reached), many that do not, and garbage. */
const addresses = weighted(
  [2, fc.integer({ min: 1, max: 8 }).map((n) => `10.9.0.${n}`)],
  [4, fc.ipV4()],
  [2, fc.ipV6()],
  [
    1,
    fc.constantFrom(
      "unknown",
      "",
      ",,,",
      "1.2.3.4, not-an-address",
      "999.999.999.999",
      "[::1]:8080",
      "::ffff:10.0.0.1",
      "fe80::1%eth0",
      "1.2.3.4:99999",
      "_hidden",
      "\u00e9\u00e9"
    )
  ],
  [1, fc.array(fc.ipV4(), { minLength: 2, maxLength: 200 }).map((list) => list.join(", "))],
  [1, fc.integer({ min: 100, max: 4000 }).map((count) => "9".repeat(count))]
)

const forwarded = fc.oneof(
  addresses.map((address) => `for=${address}`),
  addresses.map((address) => `for="[${address}]:4711";proto=http, for=unknown`),
  fc.constantFrom("for=", "for", ";;;", 'for="', "by=1.2.3.4;for=_x;host=evil")
)

const cookieGarbage = fc.oneof(
  fc.constantFrom(
    "portcullis_refresh=garbage",
    "portcullis_refresh=; portcullis_csrf=",
    "a",
    "=",
    ";;;",
    'portcullis_refresh="quoted"',
    "portcullis_refresh=%zz",
    "portcullis_refresh=a; portcullis_refresh=b",
    "portcullis_csrf=\u00e9\u00e9"
  ),
  fc.integer({ min: 10, max: 300 }).map((count) => Array.from({ length: count }, (_, i) => `k${i}=v${i}`).join("; ")),
  fc.integer({ min: 100, max: 4000 }).map((count) => `portcullis_refresh=${"r".repeat(count)}`),
  fc.string({ unit: "binary-ascii", maxLength: 80 }).map(latin1)
)

const originValues = (context: FuzzContext) =>
  fc.oneof(
    ...(context.origins.length === 0 ? [] : [fc.constantFrom(...context.origins)]),
    fc.constantFrom(
      "null",
      "http://evil.example",
      "https://app.example.com.evil.example",
      "http://[::1",
      "*",
      "file://",
      ""
    ),
    fc.string({ unit: "binary-ascii", maxLength: 40 }).map(latin1)
  )

const oddHeaders = fc.oneof(
  fc.string({ unit: "binary-ascii", maxLength: 200 }).map((text) => ["user-agent", latin1(text)] as const),
  fc.integer({ min: 1000, max: 8000 }).map((count) => ["user-agent", "Mozilla/5.0 ".repeat(count / 12)] as const),
  fc.constantFrom(
    ["accept", "text/html;q=0, */*;q=abc"] as const,
    ["accept-encoding", "gzip;q=2, br, *"] as const,
    ["content-encoding", "gzip"] as const,
    ["expect", "100-continue"] as const,
    ["x-request-id", "\u00e9 forged"] as const,
    ["host", "evil.example"] as const,
    ["host", "[::1"] as const,
    ["x-http-method-override", "DELETE"] as const
  )
)

/** An Authorization header, and the claims to sign when it names the forged token. */
const credentials = (context: FuzzContext, secured: boolean) =>
  weighted<{ readonly header?: string; readonly claims?: string }>(
    [secured ? 3 : 6, fc.constant({})],
    [secured ? 5 : 2, slot(context, "access").map((token) => ({ header: `Bearer ${token}` }))],
    [
      1,
      claimsArbitrary(context).map((claims) => ({
        header: `Bearer ${slotValue("forged", 0)}`,
        claims: stringify(claims)
      }))
    ],
    [2, bearerGarbage(context).map((header) => ({ header }))]
  )

/**
 * Every request aimed at one operation: its path (or another spelling of it, or a path nothing
 * serves), its method or another, a body mostly when it takes one, and the headers. Built once
 * per operation, as building arbitraries costs more than drawing from them.
 */
const operationRequest = (context: FuzzContext, operation: Operation): fc.Arbitrary<HttpFuzz> => {
  const documented = documentedTarget(context, operation)
  const takesBody = operation.body !== undefined
  const bodyAndType = weighted<readonly [string | Uint8Array | undefined, string | undefined]>(
    [
      takesBody ? 17 : 3,
      fc.tuple(
        bodyFor(context, operation),
        weighted<string | undefined>(
          [17, fc.constantFrom(...jsonTypes)],
          [3, fc.option(fc.constantFrom(...otherTypes), { nil: undefined })]
        )
      )
    ],
    [
      takesBody ? 3 : 17,
      fc.tuple(
        fc.constant(undefined),
        weighted<string | undefined>([17, fc.constant(undefined)], [3, fc.constantFrom(...jsonTypes, ...otherTypes)])
      )
    ]
  )
  return fc
    .record({
      target: weighted([17, documented], [1, unknownTarget(context)], [2, documented.chain(variant)]),
      method: weighted([17, fc.constant(operation.method)], [3, fc.constantFrom(...otherMethods)]),
      bodyAndType,
      credential: credentials(context, operation.secured),
      secondCredential: fc.option(bearerGarbage(context), { freq: 10, nil: undefined }),
      cookies: weighted<ReadonlyArray<string>>(
        [14, fc.constant([])],
        [
          3,
          slotOf(context).map((index) => [
            `portcullis_refresh=${slotValue("refresh", index)}; portcullis_csrf=${slotValue("csrf", index)}`
          ])
        ],
        [3, fc.array(cookieGarbage, { minLength: 1, maxLength: 4 })]
      ),
      csrf: weighted<string | undefined>(
        [6, fc.constant(undefined)],
        [3, slot(context, "csrf")],
        [1, fc.string({ unit: "binary-ascii", maxLength: 60 }).map(latin1)]
      ),
      clientAddress: fc.option(addresses, { freq: 6, nil: undefined }),
      forwarded: fc.option(forwarded, { freq: 10, nil: undefined }),
      origin: fc.option(originValues(context), { freq: 4, nil: undefined }),
      preflight: fc.option(fc.constantFrom("POST", "GET", "DELETE", "PATCH", "FOO"), { freq: 2, nil: undefined }),
      odd: fc.option(oddHeaders, { freq: 5, nil: undefined }),
      chunked: fc.integer({ min: 0, max: 39 }).map((draw) => draw === 0),
      self: fc.nat(context.slots - 1)
    })
    .map((drawn): HttpFuzz => {
      const [body, contentType] = drawn.bodyAndType
      const headers: Array<readonly [string, string]> = []
      const add = (name: string, value: string | undefined) => {
        if (value !== undefined) headers.push([name, value])
      }
      add("content-type", contentType)
      add("authorization", drawn.credential.header)
      add("authorization", drawn.secondCredential)
      for (const cookie of drawn.cookies) add("cookie", cookie)
      add("x-csrf-token", drawn.csrf)
      add("x-forwarded-for", drawn.clientAddress)
      add("forwarded", drawn.forwarded)
      add("origin", drawn.origin)
      if (drawn.method === "OPTIONS") add("access-control-request-method", drawn.preflight)
      if (drawn.odd !== undefined) headers.push(drawn.odd)
      return {
        kind: "http",
        method: drawn.method,
        target: drawn.target.target,
        headers,
        body,
        chunked: body !== undefined && drawn.chunked,
        claims: drawn.credential.claims,
        parameters: drawn.target.parameters,
        self: drawn.self
      }
    })
}

const httpRequest = (context: FuzzContext): fc.Arbitrary<HttpFuzz> =>
  fc.oneof(...context.operations.map((operation) => operationRequest(context, operation)))

const rawTemplates = (prefix: string) => [
  `GET ${prefix}/me\u0000 HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n`,
  `GET ${prefix}/sessions/a b HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n`,
  `GET ${prefix}/sessions/\u00c3\u00a9 HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n`,
  "GET /healthz HTTP/1.1\r\nHost: x\r\nX-Bad: a\u0001b\r\nConnection: close\r\n\r\n",
  "GET /healthz HTTP/1.1\r\nHost: x\r\nBad Header: x\r\nConnection: close\r\n\r\n",
  "GET /healthz HTTP/1.1\r\nHost: x\r\nX-Fold: a\r\n b\r\nConnection: close\r\n\r\n",
  "GET /healthz HTTP/1.1\nHost: x\nConnection: close\n\n",
  "GET /healthz HTTP/1.1\r\nConnection: close\r\n\r\n",
  "GET /healthz HTTP/1.0\r\n\r\n",
  "GET /healthz HTTP/2.0\r\nHost: x\r\nConnection: close\r\n\r\n",
  "GET /healthz HTTP/1.1\r\nHost: x\r\n\r\nGET /healthz HTTP/1.1\r\nHost: x\r\n\r\nGET /readyz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n",
  `POST ${prefix}/login HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 5\r\nContent-Length: 7\r\nConnection: close\r\n\r\n{"a":1}`,
  `POST ${prefix}/login HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 7\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n7\r\n{"a":1}\r\n0\r\n\r\n`,
  `POST ${prefix}/login HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\nzz\r\n{}\r\n0\r\n\r\n`,
  `POST ${prefix}/login HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: -1\r\nConnection: close\r\n\r\n`,
  `POST ${prefix}/login HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 1e3\r\nConnection: close\r\n\r\n`,
  `POST ${prefix}/login HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 2\r\nConnection: close\r\n\r\n{}GARBAGE\r\n\r\n`,
  `POST ${prefix}/register HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nExpect: 100-continue\r\nContent-Length: 2\r\nConnection: close\r\n\r\n{}`,
  "OPTIONS * HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n",
  "GET http://evil.example/healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n",
  `GET /${"a".repeat(20_000)} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n`,
  `GET /healthz HTTP/1.1\r\nHost: x\r\n${"X-A: b\r\n".repeat(2500)}Connection: close\r\n\r\n`
]

const bytesRequest = (context: FuzzContext): fc.Arbitrary<BytesFuzz> =>
  fc
    .oneof(
      fc.constantFrom(...rawTemplates(context.authPrefix)),
      fc
        .tuple(
          // Not CONNECT: Node's server drops such a connection unanswered when nothing listens for it.
          fc.constantFrom(...otherMethods, "G\u0000T"),
          fc.string({ unit: "binary-ascii", maxLength: 60 })
        )
        .map(([verb, line]) => `${verb} /${line} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n`),
      fc.string({ unit: "binary-ascii", maxLength: 200 }).map((garbage) => `${garbage}\r\nConnection: close\r\n\r\n`)
    )
    .map((bytes) => ({ kind: "bytes", bytes }))

const truncated = (text: string, length = 300) =>
  text.length <= length ? text : `${text.slice(0, length)}… (${text.length} characters)`

const strictUtf8 = new TextDecoder("utf-8", { fatal: true })

/** A body as text, or as hex when it is not UTF-8. */
const bodyText = (body: string | Uint8Array | undefined) => {
  if (body === undefined) return "(none)"
  if (typeof body === "string") return body
  try {
    return strictUtf8.decode(body)
  } catch {
    return `bytes ${Buffer.from(body).toString("hex")}`
  }
}

const describeHead = (method: string, target: string, headers: ReadonlyArray<readonly [string, string]>) => [
  `${method} ${truncated(target, 200)}`,
  ...headers.map(([name, value]) => `  ${name}: ${JSON.stringify(truncated(value, 200))}`)
]

/** A generated request as fast-check prints a counterexample, its placeholders as `{{access:self}}`. */
const describeRequest = (request: FuzzRequest) =>
  request.kind === "bytes"
    ? describeSent(request)
    : [
        ...describeHead(request.method, request.target, request.headers),
        ...(request.chunked ? ["  (body sent chunked)"] : []),
        ...(request.claims === undefined ? [] : [`  forged token claims: ${truncated(request.claims)}`]),
        `  body: ${JSON.stringify(truncated(bodyText(request.body)))}`,
        `  (self is pool session ${request.self})`
      ]
        .join("\n")
        .replace(placeholderPattern, "{{$1:$2}}")

/** A request as it went out, enough to replay it. */
export const describeSent = (sent: Ready | BytesFuzz) =>
  "bytes" in sent
    ? `raw bytes ${JSON.stringify(truncated(sent.bytes, 400))}`
    : [
        ...describeHead(sent.method, sent.target, sent.headers),
        `  body: ${JSON.stringify(truncated(bodyText(sent.body)))}`
      ].join("\n")

/** An answer, its body cut short. */
export const describeAnswer = (answer: Answer) =>
  `← ${answer.status} ${answer.headers["content-type"] ?? "(no Content-Type)"} ${JSON.stringify(truncated(answer.body.toString("utf8")))}`

/** Every request, and its description when fast-check reports it. */
export const fuzzRequest = (context: FuzzContext): fc.Arbitrary<FuzzRequest> =>
  weighted<FuzzRequest>([60, httpRequest(context)], [1, bytesRequest(context)]).map((request) => ({
    ...request,
    [fc.toStringMethod]: () => describeRequest(request)
  }))

// ---------------------------------------------------------------------------------------------
// Sending

/** The pool as requests see it: the current value of a session's field. */
export type Lookup = (field: SlotField, slot: number) => string

const base64url = (text: string) => Buffer.from(text).toString("base64url")

/** An HS256 token over these claims, signed with the service's own key. */
const forge = (claims: string, secret: string) => {
  const unsigned = `${base64url('{"alg":"HS256","typ":"JWT"}')}.${base64url(claims)}`
  return `${unsigned}.${createHmac("sha256", secret).update(unsigned).digest("base64url")}`
}

/** Node sends a request of these methods without a body as an empty chunked one, unless told its length. */
const chunkedByDefault = (method: string) => !["GET", "HEAD", "DELETE", "OPTIONS", "TRACE", "CONNECT"].includes(method)

/** A request ready to go: placeholders filled, body bytes, framing header. */
export const ready = (request: HttpFuzz, lookup: Lookup, secret: string) => {
  const slotLookup = (field: string, index: number) => lookup(field as SlotField, index)
  const forged = request.claims === undefined ? "" : forge(fill(request.claims, request.self, slotLookup), secret)
  const values = (field: string, index: number) => (field === "forged" ? forged : slotLookup(field, index))
  const filled = (text: string) => fill(text, request.self, values)
  const body =
    request.body === undefined
      ? undefined
      : typeof request.body === "string"
        ? new TextEncoder().encode(filled(request.body))
        : request.body
  const headers = request.headers.map(([name, value]) => [name, latin1(filled(value))] as const)
  const framing =
    body === undefined
      ? chunkedByDefault(request.method)
        ? [["content-length", "0"] as const]
        : []
      : request.chunked
        ? [["transfer-encoding", "chunked"] as const]
        : [["content-length", String(body.length)] as const]
  return {
    method: request.method,
    // A variant spelling (upper case, an escaped letter) may have broken a placeholder: what is
    // left of it goes out escaped.
    target: filled(request.target).replace(/[^\x21-\x7e]/g, percentEncode),
    headers: [...headers, ...framing],
    body,
    parameters: request.parameters.map(filled)
  }
}

type Ready = ReturnType<typeof ready>

// ---------------------------------------------------------------------------------------------
// The rules every answer keeps

export interface Rules {
  readonly operations: ReadonlyArray<Operation>
  /** CORS_ORIGINS: preflights from these are answered 204 on any route. */
  readonly corsOrigins: ReadonlyArray<string>
  /**
   * Cookie mode: the origins whose unsafe requests are served (PUBLIC_URL's and CORS_ORIGINS);
   * one from any other Origin is refused 403 before its body is looked at.
   */
  readonly cookieOrigins?: ReadonlyArray<string>
  /** Field and parameter names and schema literals: the service names these itself. */
  readonly vocabulary: ReadonlySet<string>
}

/** The names and literals a document's schemas hold. */
export const vocabularyOf = (document: OpenApiDocument): ReadonlySet<string> => {
  const words = new Set<string>(keywords)
  const visit = (node: unknown): void => {
    if (Array.isArray(node)) {
      node.forEach(visit)
      return
    }
    if (typeof node !== "object" || node === null) return
    const record = node as Record<string, unknown>
    for (const key of Object.keys((record.properties ?? {}) as object)) words.add(key)
    if (typeof record.name === "string") words.add(record.name)
    for (const literal of (record.enum ?? []) as ReadonlyArray<unknown>) words.add(String(literal))
    if (typeof record.const === "string") words.add(record.const)
    Object.values(record).forEach(visit)
  }
  visit(document)
  return words
}

const isJsonType = (value: string | undefined) =>
  value !== undefined && /^\s*application\/([\w.!#$&^+-]+\+)?json\s*(;.*)?$/i.test(value)

const header = (headers: ReadonlyArray<readonly [string, string]>, name: string) =>
  headers.find(([key]) => key.toLowerCase() === name)?.[1]

/** Submitted strings, each with whether its field holds a secret or an identifier. */
const submittedStrings = (sent: Ready) => {
  const found: Array<{ readonly value: string; readonly secret: boolean }> = []
  const visit = (node: unknown, key: string) => {
    if (typeof node === "string")
      found.push({ value: node, secret: /password|email|token|login|secret|identifier/i.test(key) })
    else if (Array.isArray(node)) for (const item of node) visit(item, key)
    else if (typeof node === "object" && node !== null)
      for (const [name, value] of Object.entries(node)) visit(value, name)
  }
  if (sent.body !== undefined) {
    const text = new TextDecoder().decode(sent.body)
    try {
      visit(JSON.parse(text), "")
    } catch {
      // Not JSON: its string literals are what a lenient reader would take.
      for (const literal of text.match(/"(?:[^"\\]|\\.)*"/g) ?? []) {
        try {
          visit(JSON.parse(literal), "")
        } catch {
          // An invalid escape: nothing a parser would have read.
        }
      }
    }
  }
  for (const parameter of sent.parameters) found.push({ value: parameter, secret: false })
  const bearer = /^Bearer\s+(.+)$/i.exec(header(sent.headers, "authorization") ?? "")?.[1]
  if (bearer !== undefined) found.push({ value: bearer, secret: true })
  return found
}

/**
 * Whether `text` carries `value`: long or unusual values anywhere (by their first 64
 * characters), short plain ones only quoted, since a short word may be part of the service's
 * own sentence ("a string at most 320 characters").
 */
const carries = (text: string, value: string) => {
  const unusual = /[^\x20-\x7e]|@/.test(value)
  if (value.length >= 8 || unusual) return text.includes(value.slice(0, 64))
  return text.includes(JSON.stringify(value))
}

const stringsIn = (node: unknown): ReadonlyArray<string> =>
  typeof node === "string"
    ? [node]
    : Array.isArray(node)
      ? node.flatMap(stringsIn)
      : typeof node === "object" && node !== null
        ? Object.values(node).flatMap(stringsIn)
        : []

/** Node answers these itself, without a body, when its HTTP parser refuses a request. */
const fromNodeParser = (answer: Answer) =>
  (answer.status === 400 || answer.status === 431) &&
  answer.body.length === 0 &&
  answer.headers["content-type"] === undefined

/** What is wrong with an answer to a request, if anything (empty when it keeps every rule). */
export const violations = (
  rules: Rules,
  sent: Ready | undefined,
  answer: Answer,
  head = sent?.method.toUpperCase() === "HEAD"
): ReadonlyArray<string> => {
  const { status } = answer
  if (status >= 500) return [`answered ${status}`]
  if (fromNodeParser(answer)) return []
  const found: Array<string> = []
  if (status >= 400) {
    const contentType = answer.headers["content-type"]
    if (!/^application\/problem\+json\s*(;|$)/.test(contentType ?? "")) {
      found.push(`a ${status} whose Content-Type is ${contentType ?? "absent"}, not application/problem+json`)
    }
    if (!head) found.push(...problemShape(answer))
    if (status === 405 && sent !== undefined) found.push(...allowShape(sent.method, answer))
  } else if (sent === undefined ? status >= 300 : !documentedSuccess(rules, sent, status)) {
    found.push(`answered ${status}, not a documented success of this request`)
  }
  if (sent === undefined || status < 400) return found

  const problem = parsed(answer.body) ?? {}
  const submitted = submittedStrings(sent).filter(
    ({ value }) => value.length >= 3 && !rules.vocabulary.has(value) && !rules.vocabulary.has(value.toLowerCase())
  )
  const everything = stringsIn(problem).join("\n")
  for (const { value } of submitted.filter((item) => item.secret)) {
    if (carries(everything, value))
      found.push(`the body echoes a submitted secret: ${JSON.stringify(truncated(value, 80))}`)
  }
  if (status === 422) {
    const messages = stringsIn([
      (problem as { detail?: unknown }).detail,
      (problem as { title?: unknown }).title,
      ((problem as { errors?: ReadonlyArray<{ message?: unknown }> }).errors ?? []).map((error) => error.message)
    ]).join("\n")
    for (const { value } of submitted.filter((item) => !item.secret)) {
      if (carries(messages, value))
        found.push(`the 422 echoes a submitted value: ${JSON.stringify(truncated(value, 80))}`)
    }
  }

  const declared = operationsAt(rules.operations, sent.target).filter(
    (operation) => operation.method === sent.method.toUpperCase()
  )
  const hasBody = sent.body !== undefined && sent.body.length > 0
  if (declared.length > 0 && hasBody && !isJsonType(header(sent.headers, "content-type"))) {
    if (![411, 413, 415, 429].includes(status) && !(status === 403 && refusedOrigin(rules, sent))) {
      found.push(
        `a body with Content-Type ${header(sent.headers, "content-type") ?? "absent"} answered ${status}, not 415`
      )
    }
  }
  return found
}

/** Whether cookie mode refuses the request for its Origin (interfaces/http/originCheck.ts). */
const refusedOrigin = (rules: Rules, sent: Ready) => {
  const origin = header(sent.headers, "origin")
  return (
    rules.cookieOrigins !== undefined &&
    origin !== undefined &&
    !["GET", "HEAD", "OPTIONS", "TRACE"].includes(sent.method.toUpperCase()) &&
    !rules.cookieOrigins.includes(origin)
  )
}

const parsed = (body: Buffer): unknown => {
  try {
    return JSON.parse(body.toString("utf8"))
  } catch {
    return undefined
  }
}

const problemShape = (answer: Answer): ReadonlyArray<string> => {
  if (answer.body.length === 0) return [`a ${answer.status} with no body`]
  const body = parsed(answer.body) as Record<string, unknown> | undefined
  if (typeof body !== "object" || body === null) return [`a ${answer.status} whose body is not a JSON object`]
  const found: Array<string> = []
  for (const field of ["type", "title", "detail", "code"]) {
    if (typeof body[field] !== "string") found.push(`a problem without a string "${field}"`)
  }
  if (body.status !== answer.status) found.push(`a problem whose status ${String(body.status)} is not ${answer.status}`)
  if (answer.status === 422) {
    const errors = body.errors
    const wellFormed =
      Array.isArray(errors) &&
      errors.every(
        (error: unknown) =>
          typeof error === "object" &&
          error !== null &&
          typeof (error as { path?: unknown }).path === "string" &&
          typeof (error as { message?: unknown }).message === "string"
      )
    if (!wellFormed) found.push("a 422 without errors: [{path, message}]")
  }
  return found
}

/** A 405 names the methods the route takes, and the request's is not among them. */
const allowShape = (method: string, answer: Answer): ReadonlyArray<string> => {
  const allow = answer.headers.allow
  if (allow === undefined) return ["a 405 without Allow"]
  const methods = allow.split(",").map((name) => name.trim().toUpperCase())
  return methods.includes(method.toUpperCase()) ? [`a 405 whose Allow (${allow}) lists the request's own method`] : []
}

const documentedSuccess = (rules: Rules, sent: Ready, status: number) => {
  const method = sent.method.toUpperCase()
  const at = operationsAt(rules.operations, sent.target)
  const origin = header(sent.headers, "origin")
  if (
    method === "OPTIONS" &&
    status === 204 &&
    at.length > 0 &&
    origin !== undefined &&
    rules.corsOrigins.includes(origin) &&
    header(sent.headers, "access-control-request-method") !== undefined
  ) {
    return true
  }
  const as = method === "HEAD" ? "GET" : method
  return at.some((operation) => operation.method === as && operation.successes.includes(status))
}
