import { describe, expect, it } from "@effect/vitest"
import { DateTime } from "effect"
import {
  composeMail,
  composeNotice,
  composeSignInMail,
  type MailTemplates,
  mailLink,
  templateFaults,
  templateNames,
  withReplacements
} from "../../domain/Mail.js"
import type { NoticeKind, SecurityNotice } from "../../domain/SecurityNotice.js"
import { escapeHtml } from "../../domain/Text.js"
import { builtInTemplates } from "../../infrastructure/mail/templates.js"

const context = { publicUrl: new URL("https://auth.example.com/app"), product: "Example <Cloud>" }
const token = "header.payload.signature"

describe("mail templates", () => {
  it("the built-in templates are usable: a subject line, known placeholders, the link and the token", () => {
    for (const name of templateNames) {
      expect(templateFaults(name, "text", builtInTemplates[name].text)).toEqual([])
      expect(templateFaults(name, "html", builtInTemplates[name].html)).toEqual([])
    }
  })

  it("a sign-in mail asked from the provider's page links back to it with the request; otherwise to /sign-in", () => {
    const provider = { ...context, providerSignIn: "https://auth.example.com/app/api/v1/auth/oauth2/sign-in" }
    const mail = { email: "ada@example.com", token: "t0k", code: "123456" }
    const resumed = composeSignInMail(builtInTemplates, provider, { ...mail, authorization_request: "r&1" })
    expect(resumed.text).toContain("https://auth.example.com/app/api/v1/auth/oauth2/sign-in?request=r%261&token=t0k")
    expect(composeSignInMail(builtInTemplates, provider, mail).text).toContain(
      "https://auth.example.com/app/sign-in?token=t0k"
    )
    // A provider that is off has no page to return to: the mail keeps the hosted sign-in page.
    expect(composeSignInMail(builtInTemplates, context, { ...mail, authorization_request: "r" }).text).toContain(
      "https://auth.example.com/app/sign-in?token=t0k"
    )
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
    expect(templateFaults("verify-email", "text", "Hello {{lnik}}\n")).toEqual([
      "does not begin with a 'Subject: …' line",
      "names {{lnik}}, which is not a placeholder of verify-email; expected {{link}}, {{token}}, {{product}}, {{email}}",
      "names neither {{link}} nor {{token}}"
    ])
    expect(templateFaults("reset-password", "html", "<p>{{token}}</p>")).toEqual([])
    expect(templateFaults("reset-password", "html", "<p>{{product}}</p>")).toEqual([
      "names neither {{link}} nor {{token}}"
    ])
    // A token mail has no change to name.
    expect(templateFaults("verify-email", "html", "<p>{{link}} {{change}}</p>")).toEqual([
      "names {{change}}, which is not a placeholder of verify-email; expected {{link}}, {{token}}, {{product}}, {{email}}"
    ])
  })

  it("the link keeps PUBLIC_URL's path and encodes the token", () => {
    expect(mailLink(new URL("https://auth.example.com/"), "reset-password", "a b")).toBe(
      "https://auth.example.com/reset-password?token=a+b"
    )
    expect(mailLink(context.publicUrl, "verify-email", "t")).toBe("https://auth.example.com/app/verify-email?token=t")
  })
})

describe("security notices", () => {
  const occurred_at = DateTime.unsafeMake("2026-01-02T03:04:05.678Z")
  const notice = (kind: NoticeKind, subject: string, client: Partial<SecurityNotice> = {}): SecurityNotice => ({
    kind,
    subject,
    occurred_at,
    ip_address: "203.0.113.7",
    user_agent: "Mozilla/5.0 (X11; Linux x86_64) Firefox/140.0",
    ...client
  })
  const compose = (value: SecurityNotice, templates: MailTemplates = builtInTemplates) =>
    composeNotice(templates, context, "alice@example.com", value)

  it.each([
    [
      "password_set",
      "",
      "A password was set on your account",
      "A password was set on your account, which had none until now."
    ],
    ["password_changed", "", "Your password was changed", "The password of your account was changed."],
    [
      "password_reset",
      "",
      "Your password was reset",
      "The password of your account was reset, and every session was ended."
    ],
    [
      "passkey_added",
      "MacBook",
      "A passkey was added to your account",
      "A passkey named \u201cMacBook\u201d was added to your account."
    ],
    [
      "passkey_removed",
      "MacBook",
      "A passkey was removed from your account",
      "The passkey named \u201cMacBook\u201d was removed from your account."
    ],
    [
      "provider_linked",
      "github",
      "A sign-in provider was linked to your account",
      "Your account was linked to an account at \u201cgithub\u201d: signing in through \u201cgithub\u201d now opens it."
    ],
    [
      "provider_unlinked",
      "github",
      "A sign-in provider was unlinked from your account",
      "Your account was unlinked from its account at \u201cgithub\u201d: signing in through \u201cgithub\u201d no longer opens it."
    ],
    [
      "taken_over",
      "the password, 2 passkeys, the linked github account",
      "Earlier ways to sign in were removed from your account",
      "Your email address was confirmed. It had never been confirmed before, so every way to sign in set up until then was removed (the password, 2 passkeys, the linked github account) and every session was ended."
    ]
  ] as const)(
    "%s: names the change, when, the address and the client, in text and HTML",
    (kind, subject, summary, change) => {
      const mail = compose(notice(kind, subject))
      expect(mail.to).toBe("alice@example.com")
      expect(mail.subject).toBe(`Security notice for Example <Cloud>: ${summary}`)
      const text = mail.text.split("\n")
      expect(text[0]).toBe(change)
      expect(text).toEqual(
        expect.arrayContaining([
          "Account: alice@example.com",
          "When: 2026-01-02 03:04:05 UTC",
          "IP address: 203.0.113.7",
          "Client: Mozilla/5.0 (X11; Linux x86_64) Firefox/140.0"
        ])
      )
      expect(mail.text).toContain("reset your password")
      expect(mail.html).toContain(`<p style="margin:0 0 1rem">${escapeHtml(change)}</p>`)
      expect(mail.html).toContain(`>${summary}</h1>`)
      expect(mail.html).toContain(">2026-01-02 03:04:05 UTC</td>")
      expect(mail.html).toContain(">203.0.113.7</td>")
      expect(mail.html).toContain(">Mozilla/5.0 (X11; Linux x86_64) Firefox/140.0</td>")
      expect(mail.html).toContain("Example &lt;Cloud&gt;")
      for (const part of [mail.subject, mail.text, mail.html]) {
        expect(part).not.toContain("{{")
        // Nothing to click: no link, so no token and nothing to phish with.
        expect(part).not.toMatch(/https?:|href=/)
      }
    }
  )

  it("a passkey without a name and a takeover that removed nothing still read as sentences", () => {
    expect(compose(notice("passkey_added", " ")).text.split("\n")[0]).toBe("A passkey was added to your account.")
    expect(compose(notice("taken_over", "")).text.split("\n")[0]).toBe(
      "Your email address was confirmed. It had never been confirmed before, so every session started until then was ended."
    )
  })

  it("escapes a device name and a user agent in the HTML part, and keeps them out of the subject", () => {
    const device = "<img src=x onerror=alert(1)>"
    const agent = `Mozilla/5.0 <script>alert("x")</script> & 'more'`
    const mail = compose(notice("passkey_added", device, { user_agent: agent }))
    expect(mail.html).toContain("A passkey named \u201c&lt;img src=x onerror=alert(1)&gt;\u201d was added")
    expect(mail.html).toContain(
      ">Mozilla/5.0 &lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt; &amp; &#39;more&#39;</td>"
    )
    expect(mail.html).not.toContain("<img")
    expect(mail.html).not.toContain("<script")
    // Plain text is not markup: the reader sees what the client sent.
    expect(mail.text).toContain(`\u201c${device}\u201d`)
    expect(mail.text).toContain(`Client: ${agent}\n`)
    expect(mail.subject).not.toContain("img")
  })

  it("keeps every value on one line: the subject is one header, the text says only what the service wrote", () => {
    const templates = withReplacements(builtInTemplates, {
      "security-notice": {
        text: "Subject: {{change}} {{client}}\n\n{{change}}\nClient: {{client}}\nIP: {{ip_address}}\n"
      }
    })
    const mail = compose(
      notice("passkey_added", "Phone\r\nBcc: x@example.com", {
        user_agent: "curl\r\n\r\nThis change was made\u2028by our support team.",
        ip_address: "198.51.100.1\n"
      }),
      templates
    )
    expect(mail.subject).not.toMatch(/[\r\n]/)
    expect(mail.subject).toBe(
      "A passkey named \u201cPhone Bcc: x@example.com\u201d was added to your account. curl This change was made by our support team."
    )
    expect(mail.text).toBe(
      "A passkey named \u201cPhone Bcc: x@example.com\u201d was added to your account.\nClient: curl This change was made by our support team.\nIP: 198.51.100.1\n"
    )
  })

  it("says unknown for a change with no client (an operator's reset from the command line)", () => {
    const text = compose(notice("password_reset", "", { ip_address: null, user_agent: null })).text.split("\n")
    expect(text).toEqual(expect.arrayContaining(["IP address: unknown", "Client: unknown"]))
  })

  it("a replaced notice template gives the notice its words; the token mails keep theirs", () => {
    const templates = withReplacements(builtInTemplates, {
      "security-notice": { text: "Subject: Heads up, {{email}}\n\n{{change}} ({{when}}, {{ip_address}})\n" }
    })
    const mail = compose(notice("password_changed", ""), templates)
    expect(mail.subject).toBe("Heads up, alice@example.com")
    expect(mail.text).toBe("The password of your account was changed. (2026-01-02 03:04:05 UTC, 203.0.113.7)\n")
    expect(mail.html).toBe(compose(notice("password_changed", "")).html)
    expect(templates["verify-email"]).toEqual(builtInTemplates["verify-email"])
  })

  it("a notice template must name the change, and may name neither a link nor a token", () => {
    expect(templateFaults("security-notice", "html", "<p>{{summary}}</p>")).toEqual(["does not name {{change}}"])
    expect(templateFaults("security-notice", "text", "Subject: x\n\n{{change}} {{link}} {{token}}\n")).toEqual([
      "names {{link}}, which is not a placeholder of security-notice; expected {{change}}, {{summary}}, {{when}}, {{ip_address}}, {{client}}, {{product}}, {{email}}",
      "names {{token}}, which is not a placeholder of security-notice; expected {{change}}, {{summary}}, {{when}}, {{ip_address}}, {{client}}, {{product}}, {{email}}"
    ])
    expect(templateFaults("security-notice", "text", "{{change}}\n")).toEqual([
      "does not begin with a 'Subject: …' line"
    ])
  })
})
