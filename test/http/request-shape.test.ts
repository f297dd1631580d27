import { describe, expect, it } from "vitest"
import { jsonShapeFault, pathHasControlCharacter, withoutActualValue } from "../../interfaces/http/requestShape.js"

const nested = (depth: number) => `${"[".repeat(depth)}${"]".repeat(depth)}`

describe("jsonShapeFault", () => {
  it("counts objects and arrays, up to 32 levels", () => {
    expect(jsonShapeFault(nested(32))).toBeUndefined()
    expect(jsonShapeFault(nested(33))).toBe("too deep")
    expect(jsonShapeFault(`${'{"a":'.repeat(33)}1${"}".repeat(33)}`)).toBe("too deep")
  })

  it("does not count brackets inside strings, escaped quotes included", () => {
    expect(jsonShapeFault(JSON.stringify({ a: "[".repeat(100), b: '"{{{{' }))).toBeUndefined()
    expect(jsonShapeFault(`{"a":"\\\\"}`)).toBeUndefined()
  })

  it("finds an escaped NUL in any string, key or value, and nothing else", () => {
    expect(jsonShapeFault(JSON.stringify({ password: "a\u0000b" }))).toBe("NUL character")
    expect(jsonShapeFault(JSON.stringify({ "k\u0000": 1 }))).toBe("NUL character")
    expect(jsonShapeFault(JSON.stringify({ a: "\u0001\u001f", b: "\\u0000 as text" }))).toBeUndefined()
  })
})

describe("pathHasControlCharacter", () => {
  it("decodes the path, not the query, before looking", () => {
    expect(pathHasControlCharacter("/sessions/%00")).toBe(true)
    expect(pathHasControlCharacter("/sessions/a%0Ab")).toBe(true)
    expect(pathHasControlCharacter("/sessions/x%7f")).toBe(true)
    expect(pathHasControlCharacter("/sessions/abc?x=%00")).toBe(false)
    expect(pathHasControlCharacter("/sessions/%E0%A4%A")).toBe(false)
  })
})

describe("withoutActualValue", () => {
  it("keeps the rule and drops the value Effect's messages end with", () => {
    expect(withoutActualValue('Expected a string at most 4096 character(s) long, actual "hunter2hunter2"')).toBe(
      "Expected a string at most 4096 character(s) long"
    )
    expect(withoutActualValue('Expected string, actual ["a",\n"b"]')).toBe("Expected string")
    expect(withoutActualValue("is missing")).toBe("is missing")
  })
})
