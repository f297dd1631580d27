import { afterAll, describe, expect, it } from "vitest"
import { killAll, startServer, temporaryDatabase } from "../support/processes.js"

/**
 * /dev/inbox/latest: the development inbox's newest mail as plain text, for a terminal or a
 * script (docs/first-hour.md reads its mails there), to this machine only like the page.
 */

afterAll(killAll)

const register = (api: string, email: string) =>
  fetch(`${api}/register`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ email, password: "correct horse battery staple" })
  })

describe("the development inbox's newest mail as text", () => {
  it("answers the newest mail (to an address when named), waits a little for one, and hides from proxies", {
    timeout: 60_000
  }, async () => {
    const server = await startServer({
      SERVICE_SECRET_KEY: "dev-inbox-latest-secret-key-32-bytes-or-more",
      SERVICE_DATABASE_URL: temporaryDatabase()
    })
    const latest = `${server.url}/dev/inbox/latest`

    // None yet: after a short wait, a 404 that says so.
    const none = await fetch(latest)
    expect(none.status).toBe(404)
    expect(await none.text()).toBe("No mail yet.\n")

    // Asked at once after the request that mails: the answer waits for the mail.
    expect((await register(`${server.url}/api/v1/auth`, "first@example.com")).status).toBe(202)
    const first = await fetch(latest)
    expect(first.status).toBe(200)
    expect(first.headers.get("content-type")).toBe("text/plain; charset=utf-8")
    expect(first.headers.get("cache-control")).toBe("no-store")
    const text = await first.text()
    expect(text).toMatch(
      /^To: {6}first@example\.com\nSubject: Confirm your email address for Portcullis\nDate: {4}\S+\n\n/
    )
    expect(text).toContain(`${server.url.replace("127.0.0.1", "localhost")}/verify-email?token=`)

    expect((await register(`${server.url}/api/v1/auth`, "second@example.com")).status).toBe(202)
    await expect
      .poll(async () => (await (await fetch(latest)).text()).split("\n")[0])
      .toBe("To:      second@example.com")
    const toFirst = await (await fetch(`${latest}?to=FIRST@example.com`)).text()
    expect(toFirst.split("\n")[0]).toBe("To:      first@example.com")

    // Through a proxy on this machine (a forwarding header), nothing is there.
    const proxied = await fetch(latest, { headers: { "x-forwarded-for": "203.0.113.9" } })
    expect(proxied.status).toBe(404)
    expect(await proxied.text()).not.toContain("first@example.com")
  })
})
