import { HttpApiGroup } from "@effect/platform"
import { PREFIX } from "../../../config/reader.js"
import { featureApi } from "../Api.js"
import { feature } from "../Feature.js"

/**
 * Passkey sign-in, served when PASSKEY_ENABLED. Its routes arrive with its use cases; until
 * then start-up refuses PASSKEY_ENABLED=true.
 */
export const passkey = feature({
  name: "passkey",
  limits: [
    { bucket: "passkey_auth", path: "/passkeys/authenticate/begin" },
    { bucket: "passkey_auth", path: "/passkeys/authenticate/complete" }
  ],
  enabled: (settings) => settings.passkeys.passkeyEnabled,
  unsupported: (settings) =>
    settings.passkeys.passkeyEnabled
      ? [`${PREFIX}PASSKEY_ENABLED: passkey sign-in is not supported by this version yet`]
      : [],
  api: ({ settings }) =>
    featureApi(
      { prefix: settings.server.authPrefix, title: "Passkeys", description: "Passwordless sign-in with passkeys." },
      HttpApiGroup.make("passkey"),
      (handlers) => handlers
    )
})
