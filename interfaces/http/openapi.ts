import {
  AccountLockedError,
  AuthenticationError,
  AuthorizationError,
  InvalidPasswordError,
  RateLimitedError,
  ReauthenticationError,
  StoreUnavailableError,
  TokenError,
  ValidationError
} from "../../domain/errors.js"
import { CsrfError } from "./errors.js"
import { type ErrorKind, type ProblemCode, problem, problemOf, requestProblems, titleOf } from "./problems.js"

type Json = Record<string, unknown>

const decodeErrorRef = "#/components/schemas/HttpApiDecodeError"
const refOf = (code: ProblemCode) => `#/components/schemas/${code}`
const codeOfRef = (schema: Json | undefined) =>
  typeof schema?.$ref === "string" ? (schema.$ref.split("/").pop() as ProblemCode) : undefined

/** An example body of each code, rendered by the service's own table from a typical error. */
const typical: ReadonlyArray<ErrorKind> = [
  new AuthenticationError(),
  new ReauthenticationError(),
  new AuthorizationError({ message: "Superuser access required." }),
  new TokenError({ message: "The access token is not valid." }),
  new InvalidPasswordError({ problems: ["must be at least 8 characters long"] }),
  new AccountLockedError({ retryAfterSeconds: 900 }),
  new ValidationError({
    message: "The request does not match the expected schema.",
    errors: [{ path: "email", message: "is missing" }]
  }),
  new CsrfError({ message: "The X-CSRF-Token header is required when the refresh cookie is used." }),
  new RateLimitedError({ limit: 5, resetSeconds: 42 }),
  new StoreUnavailableError({ store: "database" })
]
const examples = new Map<string, Json>(
  typical.map((error) => {
    const { body } = problemOf(error)
    return [`${body.code} ${body.status}`, { ...body }]
  })
)
const exampleOf = (code: ProblemCode, status: number, title: string): Json =>
  examples.get(`${code} ${status}`) ?? { ...problem(status, code, title, `${title}.`).body }

/**
 * Effect marks its built-in JSON schemas (unknown, object) with one `$id` each, repeated wherever
 * they are used; identifiers must be unique in a document, and nothing refers to these.
 */
const withoutSharedIds = (node: unknown): void => {
  if (Array.isArray(node)) {
    for (const item of node) withoutSharedIds(item)
    return
  }
  if (typeof node !== "object" || node === null) return
  const record = node as Json
  if (typeof record.$id === "string" && record.$id.startsWith("/schemas/")) delete record.$id
  for (const value of Object.values(record)) withoutSharedIds(value)
}

const header = (description: string, schema: Json = { type: "integer" }) => ({ description, schema })
const retryAfter = header("Seconds to wait before trying again.")

/** The headers that come with a status, whichever route answers it. */
const headersOf: Readonly<Record<string, Json>> = {
  "401": {
    "WWW-Authenticate": header(
      '`Bearer`, `Bearer error="invalid_token"`, or, to add a way in on an old sign-in, `Bearer error="insufficient_user_authentication", error_description="…", max_age=<seconds>` (RFC 9470).',
      { type: "string" }
    )
  },
  "423": { "Retry-After": retryAfter },
  "429": {
    "Retry-After": retryAfter,
    "RateLimit-Limit": header("Requests allowed in the window."),
    "RateLimit-Remaining": header("Requests left in the window."),
    "RateLimit-Reset": header("Seconds until the window resets.")
  },
  "503": { "Retry-After": retryAfter }
}

const problemResponse = (codes: ReadonlyArray<ProblemCode>, description: string, status: number): Json => {
  const refs = codes.map((code) => ({ $ref: refOf(code) }))
  const first = codes[0] ?? "InternalError"
  return {
    description,
    ...(headersOf[String(status)] === undefined ? {} : { headers: headersOf[String(status)] }),
    content: {
      "application/problem+json": {
        schema: refs.length === 1 ? refs[0] : { anyOf: refs },
        example: exampleOf(first, status, description)
      }
    }
  }
}

/**
 * Refusals of the request itself, answered by the problem renderer before any route runs, on
 * every route: one that takes no body still refuses a streamed, oversized or non-JSON one.
 */
const requestRefusals = [
  "LengthRequiredError",
  "PayloadTooLargeError",
  "UnsupportedMediaTypeError",
  "InternalError"
] as const

export interface DocumentOptions {
  readonly version: string
  readonly publicUrl: string
  /** Whether GLOBAL_RATE_LIMIT counts the requests to a path, which may then answer 429 whatever their route. */
  readonly globallyLimited: (path: string) => boolean
  /** Cookie mode: every unsafe request from a foreign Origin is refused with 403 CsrfError, whatever its route. */
  readonly originChecked: boolean
}

const unsafeMethods = new Set(["post", "put", "patch", "delete"])

/**
 * Makes the generated OpenAPI document say what the service answers. HttpApi documents a 400
 * HttpApiDecodeError on every route, but Portcullis renders every decoding failure as a 422
 * ValidationError problem, and every error as application/problem+json, with the headers that
 * belong to its status and an example; the refusals made before any route runs (411, 413, 415
 * and 500 on every route, 429 on the paths a global rate limit counts, 403 on every unsafe route
 * in cookie mode) are listed too.
 */
export const documentProblems =
  (options: DocumentOptions) =>
  (spec: Json): Json => {
    const paths = (spec.paths ?? {}) as Record<string, Record<string, Json>>
    for (const [path, operations] of Object.entries(paths)) {
      for (const [method, operation] of Object.entries(operations)) {
        const responses = (operation.responses ?? {}) as Record<string, Json>
        for (const [status, response] of Object.entries(responses)) {
          if (Number(status) < 400) continue
          const content = (response.content ?? {}) as Record<string, { schema?: Json }>
          const schema = Object.values(content)[0]?.schema
          const members = Array.isArray(schema?.anyOf) ? (schema.anyOf as ReadonlyArray<Json>) : [schema]
          const codes = [...new Set(members.filter((member) => member?.$ref !== decodeErrorRef).map(codeOfRef))].filter(
            (code): code is ProblemCode => code !== undefined
          )
          if (codes.length === 0) {
            delete responses[status]
            continue
          }
          const titles = [...new Set(codes.map(titleOf))]
          responses[status] = problemResponse(codes, titles.join("; "), Number(status))
        }
        for (const code of requestRefusals) {
          const { status, title } = requestProblems[code]
          responses[String(status)] = problemResponse([code], title, status)
        }
        if (options.globallyLimited(path) && responses["429"] === undefined) {
          responses["429"] = problemResponse(["RateLimitedError"], titleOf("RateLimitedError"), 429)
        }
        if (options.originChecked && unsafeMethods.has(method)) {
          const content = (responses["403"]?.content ?? {}) as Record<string, { schema?: Json }>
          const forbidden = content["application/problem+json"]?.schema
          const codes = ((forbidden?.anyOf ?? (forbidden === undefined ? [] : [forbidden])) as ReadonlyArray<Json>)
            .map(codeOfRef)
            .filter((code): code is ProblemCode => code !== undefined)
          const all = [...new Set<ProblemCode>([...codes, "CsrfError"])]
          responses["403"] = problemResponse(all, [...new Set(all.map(titleOf))].join("; "), 403)
        }
      }
    }
    const schemas = ((spec.components as Json | undefined)?.schemas ?? {}) as Json
    for (const name of ["HttpApiDecodeError", "Issue", "PropertyKey"]) delete schemas[name]
    withoutSharedIds(spec)
    const info = (spec.info ?? {}) as Json
    return { ...spec, info: { ...info, version: options.version }, servers: [{ url: options.publicUrl }] }
  }
