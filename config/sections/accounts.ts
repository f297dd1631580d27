import * as F from "../forms.js"
import { PREFIX, type SettingsReader } from "../reader.js"

/** How accounts are made and signed in to: the login field, enumeration prevention, passwords. */
export const readAccounts = (read: SettingsReader) => {
  const passwordMinLength = read.setting("PASSWORD_MIN_LENGTH", F.int(1, 1024), 8)
  const passwordMaxLength = read.setting("PASSWORD_MAX_LENGTH", F.int(1, 4096), 256)
  if (passwordMinLength > passwordMaxLength) {
    read.problem(`${PREFIX}PASSWORD_MIN_LENGTH is above ${PREFIX}PASSWORD_MAX_LENGTH; expected min <= max`)
  }
  return {
    preventRegistrationEnumeration: read.setting("PREVENT_REGISTRATION_ENUMERATION", F.bool, true),
    loginField: read.setting("LOGIN_FIELD", F.text, "email"),
    passwordMinLength,
    passwordMaxLength,
    sendVerificationOnRegister: read.setting("SEND_VERIFICATION_ON_REGISTER", F.bool, true)
  }
}

export type AccountSettings = ReturnType<typeof readAccounts>
