import { describe, expect, it } from "vitest"
import { printable } from "../../domain/Text.js"

describe("text for a terminal", () => {
  it("keeps lines and tabs, and shows every other control character as U+FFFD", () => {
    expect(printable("a\tb\nc")).toBe("a\tb\nc")
    expect(printable("evil\u001b]0;pwned\u0007\rover\u009b")).toBe("evil\ufffd]0;pwned\ufffd\ufffdover\ufffd")
  })
})
