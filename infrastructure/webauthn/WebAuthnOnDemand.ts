import { Effect, Layer } from "effect"
import { WebAuthn } from "../../application/ports/WebAuthn.js"
import type { WebAuthnOptions } from "./WebAuthnSimplewebauthn.js"

/**
 * The relying party of WebAuthnSimplewebauthn, loaded the first time a ceremony needs it: with
 * passkeys off nothing serves their routes, and simplewebauthn with the ASN.1 libraries under it
 * would cost start-up time for nothing. Code that composes the use cases itself may still call the
 * port, and then gets the real one.
 */
export const layer = (options: WebAuthnOptions) =>
  Layer.effect(
    WebAuthn,
    Effect.map(
      Effect.cached(
        Effect.map(
          Effect.promise(() => import("./WebAuthnSimplewebauthn.js")),
          (simplewebauthn) => simplewebauthn.make(options)
        )
      ),
      (relyingParty) =>
        WebAuthn.of({
          registrationOptions: (user, exclude) =>
            Effect.flatMap(relyingParty, (rp) => rp.registrationOptions(user, exclude)),
          verifyRegistration: (credential, challenge) =>
            Effect.flatMap(relyingParty, (rp) => rp.verifyRegistration(credential, challenge)),
          authenticationOptions: (allow) => Effect.flatMap(relyingParty, (rp) => rp.authenticationOptions(allow)),
          verifyAuthentication: (credential, challenge, passkey) =>
            Effect.flatMap(relyingParty, (rp) => rp.verifyAuthentication(credential, challenge, passkey))
        })
    )
  )
