type Json = Record<string, unknown>

const decodeErrorRef = "#/components/schemas/HttpApiDecodeError"
const isDecodeError = (schema: unknown) => (schema as Json | undefined)?.$ref === decodeErrorRef

/**
 * Makes the generated OpenAPI document say what the service answers. HttpApi documents a 400
 * HttpApiDecodeError on every route, but Portcullis renders every decoding failure as a 422
 * ValidationError problem (declared on the API), and every error as application/problem+json;
 * an error declared at several levels is listed once.
 */
export const documentProblems = (spec: Json): Json => {
  const paths = (spec.paths ?? {}) as Record<string, Record<string, Json>>
  for (const operations of Object.values(paths)) {
    for (const operation of Object.values(operations)) {
      const responses = (operation.responses ?? {}) as Record<string, Json>
      for (const [status, response] of Object.entries(responses)) {
        if (Number(status) < 400) continue
        const content = (response.content ?? {}) as Record<string, { schema?: Json }>
        const schema = Object.values(content)[0]?.schema
        if (schema === undefined) continue
        const members = Array.isArray(schema.anyOf) ? (schema.anyOf as ReadonlyArray<Json>) : [schema]
        // Errors declared at several levels (API, group, middleware) appear once each.
        const kept = members
          .filter((member) => !isDecodeError(member))
          .filter(
            (member, index, all) => all.findIndex((other) => JSON.stringify(other) === JSON.stringify(member)) === index
          )
        if (kept.length === 0) {
          delete responses[status]
          continue
        }
        response.content = { "application/problem+json": { schema: kept.length === 1 ? kept[0] : { anyOf: kept } } }
      }
    }
  }
  const schemas = ((spec.components as Json | undefined)?.schemas ?? {}) as Json
  for (const name of ["HttpApiDecodeError", "Issue", "PropertyKey"]) delete schemas[name]
  return spec
}
