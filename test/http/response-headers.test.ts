import * as Cookies from "@effect/platform/Cookies"
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import { describe, expect, it } from "vitest"
import { withHeaders } from "../../interfaces/http/headers.js"

/** Headers set on an answer one at a time: each over any of the same name, nothing else of the answer changed. */
describe("withHeaders", () => {
  it("sets each header, replacing one of the same name, and keeps the status, body, content type and cookies", () => {
    const cookies = Cookies.unsafeMakeCookie("sid", "value")
    const answer = HttpServerResponse.unsafeJson(
      { ok: true },
      { status: 201, headers: { "cache-control": "public, max-age=60", "x-own": "kept" } }
    ).pipe(HttpServerResponse.mergeCookies(Cookies.fromIterable([cookies])))
    const headed = withHeaders(answer, {
      "cache-control": "no-store",
      "x-request-id": "abc",
      "x-frame-options": "DENY"
    })
    expect(headed.headers).toMatchObject({
      "cache-control": "no-store",
      "x-request-id": "abc",
      "x-frame-options": "DENY",
      "x-own": "kept",
      "content-type": "application/json"
    })
    expect(headed.status).toBe(201)
    expect(headed.body).toBe(answer.body)
    expect(headed.cookies).toBe(answer.cookies)
    expect(answer.headers["cache-control"]).toBe("public, max-age=60")
  })

  it("answers the response itself when there is nothing to set", () => {
    const answer = HttpServerResponse.text("plain")
    expect(withHeaders(answer, {})).toBe(answer)
  })
})
