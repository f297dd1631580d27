import * as F from "../forms.js"
import { PREFIX, type SettingsReader } from "../reader.js"

/** How accounts are made and signed in to: the login field, enumeration prevention, passwords. */
export const readAccounts = (read: SettingsReader) => {
  const passwordMinLength = read.setting("PASSWORD_MIN_LENGTH", F.int(1, 1024), 8, {
    doc: "The password policy's minimum length (a deployment's `min_length` applies when stricter)."
  })
  const passwordMaxLength = read.setting("PASSWORD_MAX_LENGTH", F.int(1, 4096), 256, {
    doc: "The password policy's maximum length; longer passwords are refused before hashing."
  })
  if (passwordMinLength > passwordMaxLength) {
    read.problem(`${PREFIX}PASSWORD_MIN_LENGTH is above ${PREFIX}PASSWORD_MAX_LENGTH; expected min <= max`)
  }
  return {
    preventRegistrationEnumeration: read.setting("PREVENT_REGISTRATION_ENUMERATION", F.bool, true, {
      doc: "Registration answers 202 whatever the address; `false`: 201 with the user, or 409."
    }),
    loginField: read.setting("LOGIN_FIELD", F.text, "email", {
      doc: "The user field to sign in with: `email`, or a custom field the deployment declares (else start-up is refused)."
    }),
    passwordMinLength,
    passwordMaxLength,
    sendVerificationOnRegister: read.setting("SEND_VERIFICATION_ON_REGISTER", F.bool, true, {
      doc: "Registration sends the verification mail."
    }),
    reauthMaxAgeSeconds: read.setting("REAUTH_MAX_AGE_SECONDS", F.int(10, 86_400), 600, {
      doc: "How recent a sign-in must be (seconds) to add a way in: register a passkey, link a provider, set a first password."
    }),
    securityNotices: read.setting("SECURITY_NOTICES", F.bool, true, {
      doc: "Mail the owner when a way in is added or removed, or the password is set, changed or reset."
    }),
    emailSignInEnabled: read.setting("EMAIL_SIGN_IN_ENABLED", F.bool, false, {
      doc: "Serve the `email-sign-in` route group: sign in by a mailed link or 6-digit code."
    }),
    emailSignUpEnabled: read.setting("EMAIL_SIGN_UP_ENABLED", F.bool, false, {
      doc: "A sign-in mail requested for an unknown address creates the account (verified, without a password) when confirmed."
    })
  }
}

export type AccountSettings = ReturnType<typeof readAccounts>
