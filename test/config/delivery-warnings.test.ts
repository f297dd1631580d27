import { describe, expect, it } from "vitest"
import { startupWarnings } from "../../composition/startup.js"
import { settingsFor, testSecretKey } from "../support/TestApp.js"

/** Start-up says when a mail nobody will send is dropped: the two token mails, and the owners' security notices. */
describe("start-up warnings about mail", () => {
  const warningsFor = (env: Record<string, string>, events: Record<string, () => void> = {}) =>
    startupWarnings(settingsFor({ SERVICE_SECRET_KEY: testSecretKey, ...env }), { events }).filter((line) =>
      line.includes("no mailer")
    )

  it("warns that security notices are dropped when nothing would send them", () => {
    expect(warningsFor({}).some((line) => line.startsWith("send_security_notice has no handler"))).toBe(true)
  })

  it("does not warn about notices that are off, handled in code or mailed", () => {
    const notice = (lines: ReadonlyArray<string>) => lines.some((line) => line.includes("send_security_notice"))
    expect(notice(warningsFor({ SERVICE_SECURITY_NOTICES: "false" }))).toBe(false)
    expect(notice(warningsFor({}, { send_security_notice: () => {} }))).toBe(false)
    expect(warningsFor({ SERVICE_SMTP_URL: "smtp://127.0.0.1:2525" })).toEqual([])
  })
})
