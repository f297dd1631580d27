import { describe, expect, it } from "@effect/vitest"
import { composeMail, type MailTemplates, mailLink, templateFaults, withReplacements } from "../../domain/Mail.js"
import { builtInTemplates } from "../../infrastructure/mail/templates.js"

const context = { publicUrl: new URL("https://auth.example.com/app"), product: "Example <Cloud>" }
const token = "header.payload.signature"

describe("mail templates", () => {
  it("the built-in templates are usable: a subject line, known placeholders, the link and the token", () => {
    for (const template of Object.values(builtInTemplates)) {
      expect(templateFaults("text", template.text)).toEqual([])
      expect(templateFaults("html", template.html)).toEqual([])
    }
  })

  it("a built-in mail carries the link, the bare token on its own line, and the product in both parts", () => {
    for (const purpose of ["verify-email", "reset-password"] as const) {
      const mail = composeMail(builtInTemplates, context, purpose, "alice@example.com", token)
      const link = `https://auth.example.com/app/${purpose}?token=${token}`
      expect(mail.to).toBe("alice@example.com")
      expect(mail.subject).toMatch(/ for Example <Cloud>$/)
      expect(mail.text).not.toMatch(/^Subject:/m)
      expect(mail.text).toContain(link)
      expect(mail.text.split("\n")).toContain(token)
      expect(mail.text).not.toContain("{{")
      expect(mail.html).toContain(`href="${link}"`)
      expect(mail.html).toContain("Example &lt;Cloud&gt;")
      expect(mail.html).not.toContain("Example <Cloud>")
      expect(mail.html).not.toContain("{{")
    }
  })

  it("fills placeholders, escaping every value in the HTML part and none in the text part", () => {
    const templates: MailTemplates = withReplacements(builtInTemplates, {
      "verify-email": {
        text: "Subject: Hi {{ email }} from {{product}}\n\n{{email}} {{link}}\n{{token}}\n",
        html: "<b>{{email}}</b> {{product}}"
      }
    })
    const mail = composeMail(templates, context, "verify-email", "o'neil@example.com", token)
    expect(mail.subject).toBe("Hi o'neil@example.com from Example <Cloud>")
    expect(mail.text).toBe(`o'neil@example.com ${mailLink(context.publicUrl, "verify-email", token)}\n${token}\n`)
    expect(mail.html).toBe("<b>o&#39;neil@example.com</b> Example &lt;Cloud&gt;")
    // The other purpose keeps its built-in templates.
    expect(composeMail(templates, context, "reset-password", "a@example.com", token).subject).toBe(
      "Reset your password for Example <Cloud>"
    )
  })

  it("a subject stays one line whatever a value holds", () => {
    const templates = withReplacements(builtInTemplates, {
      "verify-email": { text: "Subject: {{product}}\n\n{{link}}\n" }
    })
    const mail = composeMail(
      templates,
      { ...context, product: "A\r\nBcc: x@example.com" },
      "verify-email",
      "a@b.co",
      token
    )
    expect(mail.subject).toBe("A Bcc: x@example.com")
  })

  it("names what is wrong with a template: no subject line, an unknown placeholder, no way to finish", () => {
    expect(templateFaults("text", "Hello {{lnik}}\n")).toEqual([
      "does not begin with a 'Subject: …' line",
      "names {{lnik}}, which is not a placeholder; expected {{link}}, {{token}}, {{product}}, {{email}}",
      "names neither {{link}} nor {{token}}"
    ])
    expect(templateFaults("html", "<p>{{token}}</p>")).toEqual([])
    expect(templateFaults("html", "<p>{{product}}</p>")).toEqual(["names neither {{link}} nor {{token}}"])
  })

  it("the link keeps PUBLIC_URL's path and encodes the token", () => {
    expect(mailLink(new URL("https://auth.example.com/"), "reset-password", "a b")).toBe(
      "https://auth.example.com/reset-password?token=a+b"
    )
    expect(mailLink(context.publicUrl, "verify-email", "t")).toBe("https://auth.example.com/app/verify-email?token=t")
  })
})
