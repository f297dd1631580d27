import { describe, expect, it } from "vitest"
import { startupWarnings } from "../../composition/startup.js"
import { settingsFor, testSecretKey } from "../support/TestApp.js"

/** Start-up says when a mail nobody will send is dropped: the two token mails, and the owners' security notices. */
describe("start-up warnings about mail", () => {
  const warningsFor = (env: Record<string, string>, events: Record<string, () => void> = {}) =>
    startupWarnings(settingsFor({ SERVICE_SECRET_KEY: testSecretKey, ...env }), { events }).filter((line) =>
      line.includes("no mailer")
    )

  // A service others reach (PUBLIC_URL not a loopback one) has no development inbox by default.
  const reached = { SERVICE_PUBLIC_URL: "https://auth.example.com" }

  it("warns that security notices are dropped when nothing would send them", () => {
    expect(warningsFor(reached).some((line) => line.startsWith("send_security_notice has no handler"))).toBe(true)
  })

  it("keeps mails in the development inbox by default on a laptop (loopback HOST and PUBLIC_URL), and says where", () => {
    const settings = settingsFor({ SERVICE_SECRET_KEY: testSecretKey, SERVICE_PORT: "8000" })
    expect(startupWarnings(settings, {})).toContain(
      "mails are kept, not sent (SERVICE_MAILER=dev): read them at http://localhost:8000/dev/inbox (this machine only); set SERVICE_SMTP_URL to send them"
    )
    for (const env of [
      reached,
      { SERVICE_HOST: "0.0.0.0" },
      { SERVICE_WORKERS: "2", SERVICE_REDIS_URL: "redis://127.0.0.1:6379", SERVICE_DATABASE_URL: "sqlite:./x.db" },
      { SERVICE_SMTP_URL: "smtp://127.0.0.1:2525" }
    ]) {
      const lines = startupWarnings(settingsFor({ SERVICE_SECRET_KEY: testSecretKey, ...env }), {})
      expect(
        lines.some((line) => line.includes("MAILER=dev")),
        JSON.stringify(env)
      ).toBe(false)
    }
  })

  it("does not warn about notices that are off, handled in code or mailed", () => {
    const notice = (lines: ReadonlyArray<string>) => lines.some((line) => line.includes("send_security_notice"))
    expect(notice(warningsFor({ ...reached, SERVICE_SECURITY_NOTICES: "false" }))).toBe(false)
    expect(notice(warningsFor(reached, { send_security_notice: () => {} }))).toBe(false)
    expect(warningsFor({ SERVICE_SMTP_URL: "smtp://127.0.0.1:2525" })).toEqual([])
  })
})
