import { chmodSync, mkdirSync, mkdtempSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { describe, expect, it } from "@effect/vitest"
import { Either } from "effect"
import { parseSettings } from "../../config/Settings.js"

/** A fresh folder holding these files. */
const folderWith = (files: Readonly<Record<string, string>>) => {
  const dir = mkdtempSync(join(tmpdir(), "portcullis-templates-"))
  for (const [name, text] of Object.entries(files)) writeFileSync(join(dir, name), text)
  return dir
}

const problemsOf = (dir: string) =>
  Either.match(parseSettings({ SERVICE_MAIL_TEMPLATES_DIR: dir }), { onLeft: (lines) => lines, onRight: () => [] })

const usableText = "Subject: Hi\n\n{{link}}\n{{token}}\n"

describe("MAIL_TEMPLATES_DIR", () => {
  it("reads the templates the folder holds, and only those", () => {
    const dir = folderWith({ "reset-password.html": "<a href='{{link}}'>Reset</a>", "notes.md": "not a template" })
    const resolved = parseSettings({ SERVICE_MAIL_TEMPLATES_DIR: dir })
    expect(Either.isRight(resolved)).toBe(true)
    if (Either.isRight(resolved)) {
      expect(resolved.right.settings.mail.mailTemplates).toEqual({
        "reset-password": { html: "<a href='{{link}}'>Reset</a>" }
      })
    }
  })

  it("is unset by default: the built-in templates, nothing read", () => {
    const resolved = parseSettings({})
    expect(Either.isRight(resolved) && resolved.right.settings.mail.mailTemplates).toEqual({})
  })

  it("a missing folder is one problem line naming the variable, the fault and the expected form", () => {
    const missing = join(tmpdir(), "portcullis-no-such-folder")
    expect(problemsOf(missing)).toEqual([
      `SERVICE_MAIL_TEMPLATES_DIR=${JSON.stringify(missing)} cannot be read (ENOENT); expected a folder holding any of verify-email.txt, verify-email.html, reset-password.txt, reset-password.html, confirm-email.txt, confirm-email.html, approve-email-change.txt, approve-email-change.html, undo-email-change.txt, undo-email-change.html, sign-in.txt, sign-in.html, security-notice.txt, security-notice.html`
    ])
  })

  it("a folder holding no template is refused", () => {
    expect(problemsOf(folderWith({ "readme.md": "x" }))).toEqual([
      expect.stringMatching(/^SERVICE_MAIL_TEMPLATES_DIR=".*" holds no template; expected a folder holding any of /)
    ])
  })

  it("a file named like no template (a typo) is refused rather than ignored", () => {
    expect(problemsOf(folderWith({ "verify-email.txt": usableText, "verify_email.html": "{{link}}" }))).toEqual([
      expect.stringMatching(/^SERVICE_MAIL_TEMPLATES_DIR: verify_email\.html is not a template's name; expected /)
    ])
  })

  it("an unusable template is refused, one line per fault", () => {
    expect(problemsOf(folderWith({ "verify-email.txt": "Hello {{name}}" }))).toEqual([
      "SERVICE_MAIL_TEMPLATES_DIR: verify-email.txt does not begin with a 'Subject: …' line",
      "SERVICE_MAIL_TEMPLATES_DIR: verify-email.txt names {{name}}, which is not a placeholder of verify-email; expected {{link}}, {{token}}, {{product}}, {{email}}",
      "SERVICE_MAIL_TEMPLATES_DIR: verify-email.txt names neither {{link}} nor {{token}}"
    ])
  })

  it("reads the security notice's templates, which name the change and no link", () => {
    const text = "Subject: {{summary}}\n\n{{change}} at {{when}} from {{ip_address}} ({{client}})\n"
    const html = "<p>{{change}}</p>"
    const resolved = parseSettings({
      SERVICE_MAIL_TEMPLATES_DIR: folderWith({ "security-notice.txt": text, "security-notice.html": html })
    })
    expect(Either.isRight(resolved) && resolved.right.settings.mail.mailTemplates).toEqual({
      "security-notice": { text, html }
    })
  })

  it("a faulty security notice template is refused at start-up, one line per fault", () => {
    expect(
      problemsOf(
        folderWith({
          "security-notice.txt": "Subject: Reset here\n\n{{link}}\n",
          "security-notice.html": "<p>{{summary}} {{token}}</p>"
        })
      )
    ).toEqual([
      "SERVICE_MAIL_TEMPLATES_DIR: security-notice.txt names {{link}}, which is not a placeholder of security-notice; expected {{change}}, {{summary}}, {{when}}, {{ip_address}}, {{client}}, {{product}}, {{email}}",
      "SERVICE_MAIL_TEMPLATES_DIR: security-notice.txt does not name {{change}}",
      "SERVICE_MAIL_TEMPLATES_DIR: security-notice.html names {{token}}, which is not a placeholder of security-notice; expected {{change}}, {{summary}}, {{when}}, {{ip_address}}, {{client}}, {{product}}, {{email}}",
      "SERVICE_MAIL_TEMPLATES_DIR: security-notice.html does not name {{change}}"
    ])
  })

  it("a template that cannot be read is refused", () => {
    const dir = folderWith({ "verify-email.txt": usableText })
    mkdirSync(join(dir, "reset-password.html"))
    expect(problemsOf(dir)).toEqual(["SERVICE_MAIL_TEMPLATES_DIR: reset-password.html cannot be read (EISDIR)"])
  })

  it.skipIf(process.getuid?.() === 0)("a template without read permission is refused", () => {
    const dir = folderWith({ "verify-email.txt": usableText })
    chmodSync(join(dir, "verify-email.txt"), 0o000)
    expect(problemsOf(dir)).toEqual(["SERVICE_MAIL_TEMPLATES_DIR: verify-email.txt cannot be read (EACCES)"])
  })
})

describe("PRODUCT_NAME and HOSTED_PAGES", () => {
  it("default to Portcullis and on", () => {
    const resolved = parseSettings({})
    expect(Either.isRight(resolved) && resolved.right.settings.server).toMatchObject({
      productName: "Portcullis",
      hostedPages: true
    })
  })

  it("a product name with a line break is refused: it goes into a mail's subject", () => {
    expect(Either.isLeft(parseSettings({ SERVICE_PRODUCT_NAME: "Acme\nBcc: x@example.com" }))).toBe(true)
    const resolved = parseSettings({ SERVICE_PRODUCT_NAME: " Acme ", SERVICE_HOSTED_PAGES: "false" })
    expect(Either.isRight(resolved) && resolved.right.settings.server).toMatchObject({
      productName: "Acme",
      hostedPages: false
    })
  })
})
