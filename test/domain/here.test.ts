import { describe, expect, it } from "vitest"
import { isLoopbackHost, underPublicUrl } from "../../domain/Here.js"

describe("where the service is", () => {
  it("puts a page under PUBLIC_URL, keeping a path of its own, with or without a slash", () => {
    expect(underPublicUrl(new URL("http://localhost:8000"), "/dev/inbox").href).toBe("http://localhost:8000/dev/inbox")
    expect(underPublicUrl(new URL("https://example.com/auth"), "/hosted/done").href).toBe(
      "https://example.com/auth/hosted/done"
    )
    expect(underPublicUrl(new URL("https://example.com/auth/"), "sign-in").href).toBe(
      "https://example.com/auth/sign-in"
    )
  })

  it("tells this machine's names and addresses from others", () => {
    for (const host of ["localhost", "127.0.0.1", "127.1.2.3", "::1", "[::1]"]) expect(isLoopbackHost(host)).toBe(true)
    for (const host of ["0.0.0.0", "10.0.0.1", "example.com", "localhost.example.com", "::ffff:10.0.0.1"])
      expect(isLoopbackHost(host)).toBe(false)
  })
})
