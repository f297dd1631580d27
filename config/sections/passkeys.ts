import { Option } from "effect"
import * as F from "../forms.js"
import { PREFIX, type SettingsReader } from "../reader.js"
import type { StorageSettings } from "./storage.js"

/** Passkey sign-in: the relying party, where challenges live and for how long. */
export const readPasskeys = (read: SettingsReader, storage: StorageSettings) => {
  const passkeyEnabled = read.setting("PASSKEY_ENABLED", F.bool, false, {
    doc: "Serve the passkey routes; needs the three relying-party settings."
  })
  const passkeyRpId = read.optional("PASSKEY_RP_ID", F.domain, {
    doc: "The relying party's ID: a bare domain (`example.com`, `localhost`) to which credentials are bound."
  })
  const passkeyRpName = read.optional("PASSKEY_RP_NAME", F.text, {
    doc: "The name browsers show in their passkey prompts."
  })
  const passkeyOrigins = read.setting("PASSKEY_ORIGINS", F.list(F.origin), [], {
    doc: "The full origins ceremonies may come from (`https://app.example.com`), each on PASSKEY_RP_ID or a subdomain of it."
  })
  const passkeyChallengeBackend = read.setting("PASSKEY_CHALLENGE_BACKEND", F.oneOf("memory", "redis"), "memory", {
    doc: "Where challenges wait: `memory` (per process) or `redis` (needs REDIS_URL; use it with several workers)."
  })
  if (passkeyEnabled) {
    if (Option.isNone(passkeyRpId)) {
      read.problem(`${PREFIX}PASSKEY_ENABLED needs ${PREFIX}PASSKEY_RP_ID; expected ${F.domain.expected}`)
    }
    if (Option.isNone(passkeyRpName)) {
      read.problem(`${PREFIX}PASSKEY_ENABLED needs ${PREFIX}PASSKEY_RP_NAME; expected ${F.text.expected}`)
    }
    if (passkeyOrigins.length === 0) {
      read.problem(`${PREFIX}PASSKEY_ENABLED needs ${PREFIX}PASSKEY_ORIGINS; expected ${F.list(F.origin).expected}`)
    }
    for (const rpId of Option.toArray(passkeyRpId)) {
      for (const value of passkeyOrigins) {
        const host = new URL(value).hostname
        if (host !== rpId && !host.endsWith(`.${rpId}`)) {
          read.problem(
            `${PREFIX}PASSKEY_ORIGINS has ${value}, which is not on ${PREFIX}PASSKEY_RP_ID=${rpId}; expected origins on that domain`
          )
        }
      }
    }
  }
  if (passkeyChallengeBackend === "redis" && Option.isNone(storage.redisUrl)) {
    read.problem(`${PREFIX}PASSKEY_CHALLENGE_BACKEND=redis needs ${PREFIX}REDIS_URL; expected redis://…`)
  }
  return {
    passkeyEnabled,
    passkeyRpId,
    passkeyRpName,
    passkeyOrigins,
    passkeyChallengeBackend,
    passkeyChallengeTtl: read.setting("PASSKEY_CHALLENGE_TTL", F.int(10, 600), 60, {
      doc: "Seconds a challenge can be completed in; also the browser's timeout."
    }),
    passkeyRequireUserVerification: read.setting("PASSKEY_REQUIRE_USER_VERIFICATION", F.bool, true, {
      doc: "Require a PIN or biometric, not only presence."
    })
  }
}

export type PasskeySettings = ReturnType<typeof readPasskeys>
