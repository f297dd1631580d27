import * as HttpApiSchema from "@effect/platform/HttpApiSchema"
import { ParseResult, Schema } from "effect"
import { FieldProblem, TokenBlacklistedError, TokenError, TokenExpiredError } from "../../domain/errors.js"
import {
  codeOf,
  type ErrorKind,
  type ProblemBody,
  type ProblemCode,
  problemContentType,
  problemOf,
  ruleOf,
  statusesOf,
  type Tag,
  titleOf
} from "./problems.js"

/**
 * The problems on the wire, as the API declares them: one schema per code, for the OpenAPI
 * document and for the typed client to decode a refusal back into its error. What each holds,
 * and with which status, comes from the one table in problems.ts.
 */

const RetryAfter = Schema.Int.annotations({ description: "Seconds to wait before trying again, as in Retry-After." })
const FieldProblems = Schema.Array(FieldProblem).annotations({ description: "Each field refused, and why." })

/** The extension members each code carries, as its responses always hold them. */
const extensionFields: Partial<Record<ProblemCode, Schema.Struct.Fields>> = {
  ValidationError: { errors: FieldProblems },
  InvalidPasswordError: { errors: FieldProblems },
  AccountLockedError: { retry_after: RetryAfter },
  ReauthenticationRequiredError: {
    max_age: Schema.Int.annotations({
      description: "How recent (seconds) a sign-in must be, as in the WWW-Authenticate challenge's max_age."
    })
  },
  RateLimitedError: {
    retry_after: RetryAfter,
    limit: Schema.Int.annotations({ description: "Requests allowed in the window." })
  },
  ServiceUnavailableError: {
    retry_after: RetryAfter,
    store: Schema.optional(Schema.String).annotations({ description: "The store that did not answer, if one did not." })
  }
}

const describe = (code: ProblemCode) =>
  `${titleOf(code)}: an RFC 9457 problem whose code is ${code}, answered with status ${statusesOf(code).join(" or ")}.`

const wireSchemas = new Map<ProblemCode, Schema.Schema<ProblemBody>>()

/**
 * The problem body of one code, named after it (one schema per code, shared by the kinds reported
 * under it, so the OpenAPI document has one component each).
 */
export const problemSchema = (code: ProblemCode): Schema.Schema<ProblemBody> => {
  const known = wireSchemas.get(code)
  if (known !== undefined) return known
  const schema = Schema.Struct({
    type: Schema.String,
    title: Schema.String,
    status: Schema.Int,
    detail: Schema.String.annotations({ description: "A sentence for people; never a submitted value." }),
    code: Schema.Literal(code),
    ...extensionFields[code]
  }).annotations({ identifier: code, description: describe(code) })
  wireSchemas.set(code, schema)
  return schema
}

/**
 * How an endpoint declares that it can fail with an error kind: the error on the type side, its
 * problem body (with the kind's status) on the wire. The server renders the response from the
 * same table (the error middleware); a client decodes the body back into the error.
 */
export const declared = <A extends ErrorKind, I, R>(schema: Schema.Schema<A, I, R> & { readonly _tag: A["_tag"] }) => {
  const tag: Tag = schema._tag
  const rule = ruleOf(tag)
  const decodeKind = ParseResult.decodeUnknown(schema)
  return Schema.transformOrFail(problemSchema(codeOf(tag)), Schema.typeSchema(schema), {
    strict: true,
    decode: (body, _, ast) => {
      const fields = rule.fields === undefined ? {} : rule.fields(body)
      return fields === undefined
        ? ParseResult.fail(new ParseResult.Type(ast, body, `not a ${tag}`))
        : decodeKind({ ...fields, _tag: tag })
    },
    encode: (error) => ParseResult.succeed(problemOf(error).body)
  }).pipe(HttpApiSchema.withEncoding({ kind: "Json", contentType: problemContentType }), (self) =>
    // Named and described by its code, so the kinds reported under one code make one component.
    self.annotations({
      ...HttpApiSchema.annotations({ status: rule.status }),
      identifier: codeOf(tag),
      description: describe(codeOf(tag))
    })
  )
}

/** A token that does not verify, has expired or was revoked: 401 on every route that takes one. */
export const TokenFailure = Schema.Union(
  declared(TokenError),
  declared(TokenExpiredError),
  declared(TokenBlacklistedError)
)
