/** A plain-text message to one address. */
export interface MailMessage {
  readonly to: string
  readonly subject: string
  readonly text: string
}

/** PUBLIC_URL/<path>?token=…, keeping any path PUBLIC_URL has. */
const link = (publicUrl: URL, path: string, token: string) => {
  const url = new URL(path, publicUrl.href.endsWith("/") ? publicUrl : `${publicUrl.href}/`)
  url.searchParams.set("token", token)
  return url.href
}

/**
 * The verification mail: the link to follow and, on its own line, the bare token for clients
 * that confirm through the API themselves.
 */
export const verificationMail = (publicUrl: URL, email: string, token: string): MailMessage => ({
  to: email,
  subject: "Confirm your email address",
  text: [
    "Confirm your email address by opening this link:",
    "",
    link(publicUrl, "verify-email", token),
    "",
    "Or use this verification token:",
    "",
    token,
    "",
    "If you did not create an account, ignore this message."
  ].join("\n")
})

/** The password-reset mail: link and bare token, as for verification. */
export const passwordResetMail = (publicUrl: URL, email: string, token: string): MailMessage => ({
  to: email,
  subject: "Reset your password",
  text: [
    "Choose a new password by opening this link:",
    "",
    link(publicUrl, "reset-password", token),
    "",
    "Or use this reset token:",
    "",
    token,
    "",
    "If you did not ask to reset your password, ignore this message; your password is unchanged."
  ].join("\n")
})
