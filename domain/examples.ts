import { Option, type Schema, SchemaAST } from "effect"

/**
 * The first example a wire schema is annotated with. The examples live on the schemas (the
 * OpenAPI document shows them); a schema made of another takes its example from there instead
 * of repeating it. A schema without one is a mistake of the code, found at start-up.
 */
export const exampleOf = <A, I, R>(schema: Schema.Schema<A, I, R>): A =>
  Option.getOrThrowWith(
    Option.map(SchemaAST.getExamplesAnnotation(schema.ast), (examples) => examples[0] as A),
    () => new Error(`the schema ${String(schema.ast)} has no example`)
  )
