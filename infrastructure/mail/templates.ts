import type { MailTemplates } from "../../domain/Mail.js"

/**
 * The HTML page around a message: inline styles only (mail clients drop style sheets), one
 * column on a card headed by the product's name.
 */
const htmlFrame = (title: string, content: string) => `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${title}</title>
</head>
<body style="margin:0;padding:0;background:#f6f6f4;color:#1b1b1b;font:16px/1.5 system-ui,-apple-system,'Segoe UI',Roboto,sans-serif">
<div style="max-width:36rem;margin:0 auto;padding:1.5rem 1rem">
<div style="background:#ffffff;border:1px solid #d0d0cc;border-radius:6px;padding:1.5rem">
<p style="margin:0 0 1rem;font-weight:600">{{product}}</p>
${content}
</div>
</div>
</body>
</html>
`

/** A mail that carries a token: the button a plain link, so that it works in every client. */
const htmlMail = (title: string, intro: string, button: string, tokenLabel: string, outro: string) =>
  htmlFrame(
    title,
    `<h1 style="margin:0 0 1rem;font-size:1.35rem">${title}</h1>
<p style="margin:0 0 1.5rem">${intro}</p>
<p style="margin:0 0 1.5rem"><a href="{{link}}" style="display:inline-block;background:#005fcc;color:#ffffff;text-decoration:none;padding:0.6rem 1.1rem;border-radius:4px;font-weight:600">${button}</a></p>
<p style="margin:0 0 0.5rem;font-size:0.9rem">If the button does not work, open this address:<br><a href="{{link}}" style="color:#005fcc;word-break:break-all">{{link}}</a></p>
<p style="margin:1rem 0 0.25rem;font-size:0.9rem">${tokenLabel}</p>
<p style="margin:0 0 1.5rem;font:0.85rem/1.4 ui-monospace,Menlo,Consolas,monospace;word-break:break-all">{{token}}</p>
<p style="margin:0;font-size:0.9rem;color:#555555">${outro}</p>`
  )

const row = (label: string, value: string) =>
  `<tr><th scope="row" style="text-align:left;vertical-align:top;padding:0 1rem 0.35rem 0;font-weight:600;white-space:nowrap">${label}</th><td style="padding:0 0 0.35rem;word-break:break-word">${value}</td></tr>`

/**
 * What the owner of an account should do about a change they did not make. The notice links
 * nowhere: the service cannot know the app's sign-in page, the hosted reset page needs a mailed
 * token, and a reader taught that security notices carry no link is harder to phish.
 */
const notYou =
  "If it was not you, reset your password straight away: ask for a password reset where you sign in to {{product}} (a reset ends every session). Then remove any passkey or linked sign-in you do not recognise."

/**
 * Said rather than "this mail holds no link": a passkey's name is the client's text, and a mail
 * client turns a name that looks like an address into a link the service never wrote.
 */
const noLink = "{{product}} never asks you to follow a link in a security notice: go to {{product}} yourself."

/**
 * The built-in mails. A deployment's MAIL_TEMPLATES_DIR replaces any of them file by file
 * (verify-email.txt, verify-email.html, reset-password.txt, reset-password.html, confirm-email.txt,
 * confirm-email.html, approve-email-change.txt, approve-email-change.html, undo-email-change.txt,
 * undo-email-change.html, sign-in.txt,
 * sign-in.html, security-notice.txt, security-notice.html). The bare token stands on its own line, for clients
 * that confirm through the API themselves.
 */
export const builtInTemplates: MailTemplates = {
  "verify-email": {
    text: `Subject: Confirm your email address for {{product}}

Confirm the email address of your {{product}} account ({{email}}) by opening this link:

{{link}}

Or use this verification token:

{{token}}

If you did not create an account, ignore this message.
`,
    html: htmlMail(
      "Confirm your email address",
      "Confirm the email address of your account ({{email}}) to finish setting it up.",
      "Confirm my email address",
      "Or use this verification token:",
      "If you did not create an account, ignore this message."
    )
  },
  "reset-password": {
    text: `Subject: Reset your password for {{product}}

Choose a new password for your {{product}} account ({{email}}) by opening this link:

{{link}}

Or use this reset token:

{{token}}

If you did not ask to reset your password, ignore this message; your password is unchanged.
`,
    html: htmlMail(
      "Reset your password",
      "Someone, hopefully you, asked to reset the password of your account ({{email}}).",
      "Choose a new password",
      "Or use this reset token:",
      "If you did not ask to reset your password, ignore this message; your password is unchanged."
    )
  },
  "confirm-email": {
    text: `Subject: Confirm your new email address for {{product}}

Someone signed in to a {{product}} account asked to move it to this address ({{email}}). Confirm the move by opening this link:

{{link}}

Or use this confirmation token:

{{token}}

If the account's current address is confirmed, it got a link too: the account moves once both are used. If you did not ask for it, ignore this message: nothing changes without the link.
`,
    html: htmlMail(
      "Confirm your new email address",
      "Someone signed in to an account asked to move it to this address ({{email}}). If the account's current address is confirmed, it got a link too: the account moves once both are used.",
      "Move my account to this address",
      "Or use this confirmation token:",
      "If you did not ask for it, ignore this message: nothing changes without the link."
    )
  },
  "approve-email-change": {
    text: `Subject: Approve moving your {{product}} account to another address

Someone signed in to your {{product}} account ({{email}}) asked to move it to {{new_email}}. It moves only if you approve, by opening this link, and the new address confirms too:

{{link}}

Or use this approval token:

{{token}}

If it was not you, do not open the link: nothing changes without it. Someone may have your password or a session: reset your password where you sign in to {{product}} (a reset ends every session and the request with them).
`,
    html: htmlMail(
      "Approve the move to another address",
      "Someone signed in to your account ({{email}}) asked to move it to {{new_email}}. It moves only if you approve here, and the new address confirms too.",
      "Approve the move",
      "Or use this approval token:",
      "If it was not you, do not open the link: nothing changes without it. Someone may have your password or a session: reset your password where you sign in to {{product}} (a reset ends every session and the request with them)."
    )
  },
  "undo-email-change": {
    text: `Subject: Your {{product}} account moved to another address

Your {{product}} account moved from this address ({{email}}) to {{new_email}}, and every other session was ended. This address no longer signs in to it.

If it was not you, undo the move by opening this link. It brings the account back to this address, ends every session, clears the password and removes any passkey or linked sign-in added since the move; then choose a new password with a password reset:

{{link}}

Or use this undo token:

{{token}}

If it was you, there is nothing to do.
`,
    html: htmlMail(
      "Your account moved to another address",
      "Your account moved from this address ({{email}}) to {{new_email}}, and every other session was ended. If it was not you, undo the move: the account comes back to this address, every session ends, the password is cleared and any passkey or linked sign-in added since the move is removed.",
      "Undo the move",
      "Or use this undo token:",
      "If it was you, there is nothing to do."
    )
  },
  "sign-in": {
    text: `Subject: Your sign-in link for {{product}}

Sign in to {{product}} as {{email}} by opening this link:

{{link}}

Or enter this code where you asked to sign in:

{{code}}

The link and the code work once, and only for a few minutes. If you did not ask to sign in, ignore this message: nobody can sign in without them.
`,
    html: htmlFrame(
      "Sign in",
      `<h1 style="margin:0 0 1rem;font-size:1.35rem">Sign in to {{product}}</h1>
<p style="margin:0 0 1.5rem">Someone, hopefully you, asked to sign in as {{email}}.</p>
<p style="margin:0 0 1.5rem"><a href="{{link}}" style="display:inline-block;background:#005fcc;color:#ffffff;text-decoration:none;padding:0.6rem 1.1rem;border-radius:4px;font-weight:600">Sign in</a></p>
<p style="margin:0 0 0.5rem;font-size:0.9rem">If the button does not work, open this address:<br><a href="{{link}}" style="color:#005fcc;word-break:break-all">{{link}}</a></p>
<p style="margin:1rem 0 0.25rem;font-size:0.9rem">Or enter this code where you asked to sign in:</p>
<p style="margin:0 0 1.5rem;font:600 1.5rem/1.4 ui-monospace,Menlo,Consolas,monospace;letter-spacing:0.2em">{{code}}</p>
<p style="margin:0;font-size:0.9rem;color:#555555">The link and the code work once, and only for a few minutes. If you did not ask to sign in, ignore this message: nobody can sign in without them.</p>`
    )
  },
  "security-notice": {
    text: `Subject: Security notice for {{product}}: {{summary}}

{{change}}

Account: {{email}}
When: {{when}}
IP address: {{ip_address}}
Client: {{client}}

If this was you, there is nothing to do.

${notYou}

${noLink}
`,
    html: htmlFrame(
      "Security notice",
      `<h1 style="margin:0 0 1rem;font-size:1.35rem">{{summary}}</h1>
<p style="margin:0 0 1rem">{{change}}</p>
<table role="presentation" style="margin:0 0 1.5rem;border-collapse:collapse;font-size:0.95rem">
${row("Account", "{{email}}")}
${row("When", "{{when}}")}
${row("IP address", "{{ip_address}}")}
${row("Client", "{{client}}")}
</table>
<p style="margin:0 0 1rem">If this was you, there is nothing to do.</p>
<p style="margin:0 0 1.5rem">${notYou}</p>
<p style="margin:0;font-size:0.9rem;color:#555555">${noLink}</p>`
    )
  }
}
