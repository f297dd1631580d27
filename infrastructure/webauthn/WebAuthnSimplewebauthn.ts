import {
  type AuthenticationResponseJSON,
  generateAuthenticationOptions,
  generateRegistrationOptions,
  type RegistrationResponseJSON,
  verifyAuthenticationResponse,
  verifyRegistrationResponse
} from "@simplewebauthn/server"
import { Duration, Effect, Layer, Option, Schema } from "effect"
import {
  type AuthenticationCredential,
  type RegistrationCredential,
  WebAuthn,
  WebAuthnVerificationError
} from "../../application/ports/WebAuthn.js"
import { CredentialId, type CredentialRef } from "../../domain/Passkey.js"
import type { UserId } from "../../domain/User.js"

export interface WebAuthnOptions {
  /** PASSKEY_RP_ID: the bare domain credentials are scoped to. */
  readonly rpId: string
  /** PASSKEY_RP_NAME: shown in the browser's prompt. */
  readonly rpName: string
  /** PASSKEY_ORIGINS: the full origins a ceremony may come from. */
  readonly origins: ReadonlyArray<string>
  /** PASSKEY_REQUIRE_USER_VERIFICATION: a PIN or biometric, not only presence. */
  readonly requireUserVerification: boolean
  /** How long the browser gives the user; best the challenge's lifetime. 60 s by default. */
  readonly timeout?: Duration.Duration
}

/** ES256, EdDSA, RS256 (COSE identifiers), in the order of preference offered. */
const ALGORITHMS = [-7, -8, -257]

const b64url = (bytes: Uint8Array) => Buffer.from(bytes).toString("base64url")
/** The user handle: the user's id as UTF-8, so that it names the user without any personal data. */
const userHandle = (id: UserId) => new TextEncoder().encode(id)

const descriptors = (credentials: ReadonlyArray<CredentialRef>) =>
  credentials.map((credential) => ({
    id: credential.credential_id,
    type: "public-key" as const,
    transports: [...credential.transports]
  }))

const refused = (reason: string) => Effect.fail(new WebAuthnVerificationError({ reason }))

/** Runs a library verification: whatever it throws is a refusal, never an exception. */
const verifying = <A>(verify: () => Promise<A>) =>
  Effect.tryPromise({
    try: verify,
    catch: (error) => new WebAuthnVerificationError({ reason: error instanceof Error ? error.message : String(error) })
  })

// The library's JSON types, rebuilt from what was decoded: only the fields it reads.
const registrationResponse = (credential: RegistrationCredential): RegistrationResponseJSON => ({
  id: credential.id,
  rawId: credential.rawId,
  type: credential.type,
  response: {
    clientDataJSON: credential.response.clientDataJSON,
    attestationObject: credential.response.attestationObject
  },
  clientExtensionResults: {}
})
const authenticationResponse = (credential: AuthenticationCredential): AuthenticationResponseJSON => ({
  id: credential.id,
  rawId: credential.rawId,
  type: credential.type,
  response: {
    clientDataJSON: credential.response.clientDataJSON,
    authenticatorData: credential.response.authenticatorData,
    signature: credential.response.signature
  },
  clientExtensionResults: {}
})

/**
 * The relying party on @simplewebauthn/server. Attestation "none": Portcullis trusts no
 * authenticator model more than another. Option generation fails only on a programming error,
 * as a defect; verification failures are WebAuthnVerificationError.
 */
export const make = (options: WebAuthnOptions) => {
  const userVerification = options.requireUserVerification ? "required" : "preferred"
  const timeout = Duration.toMillis(options.timeout ?? Duration.seconds(60))
  const expected = {
    expectedOrigin: [...options.origins],
    expectedRPID: options.rpId,
    requireUserVerification: options.requireUserVerification
  }

  return WebAuthn.of({
    registrationOptions: (user, exclude) =>
      Effect.gen(function* () {
        const excludeCredentials = descriptors(exclude)
        const generated = yield* Effect.promise(() =>
          generateRegistrationOptions({
            rpName: options.rpName,
            rpID: options.rpId,
            userID: userHandle(user.id),
            userName: user.name,
            userDisplayName: user.displayName,
            timeout,
            attestationType: "none",
            excludeCredentials,
            authenticatorSelection: { residentKey: "preferred", userVerification },
            supportedAlgorithmIDs: ALGORITHMS
          })
        )
        return {
          rp: { name: options.rpName, id: options.rpId },
          user: generated.user,
          challenge: generated.challenge,
          pubKeyCredParams: generated.pubKeyCredParams.map(({ alg }) => ({ type: "public-key" as const, alg })),
          timeout,
          excludeCredentials,
          authenticatorSelection: { residentKey: "preferred" as const, requireResidentKey: false, userVerification },
          attestation: "none" as const,
          extensions: { credProps: true }
        }
      }),

    verifyRegistration: (credential, expectedChallenge) =>
      Effect.gen(function* () {
        const verdict = yield* verifying(() =>
          verifyRegistrationResponse({
            ...expected,
            response: registrationResponse(credential),
            expectedChallenge,
            supportedAlgorithmIDs: ALGORITHMS
          })
        )
        if (!verdict.verified) return yield* refused("the attestation did not verify")
        const info = verdict.registrationInfo
        const credentialId = yield* Schema.decodeUnknown(CredentialId)(info.credential.id).pipe(
          Effect.mapError(() => new WebAuthnVerificationError({ reason: "the credential id is over 1023 bytes" }))
        )
        return {
          credential_id: credentialId,
          public_key: b64url(info.credential.publicKey),
          sign_count: info.credential.counter,
          transports: credential.response.transports ?? [],
          backed_up: info.credentialBackedUp
        }
      }),

    authenticationOptions: (allow) =>
      Effect.gen(function* () {
        const allowed = Option.match(allow, {
          onNone: () => ({}),
          onSome: (refs) => ({ allowCredentials: descriptors(refs) })
        })
        const generated = yield* Effect.promise(() =>
          generateAuthenticationOptions({ rpID: options.rpId, timeout, userVerification, ...allowed })
        )
        return { challenge: generated.challenge, rpId: options.rpId, timeout, userVerification, ...allowed }
      }),

    verifyAuthentication: (credential, expectedChallenge, passkey) =>
      Effect.gen(function* () {
        // The library verifies with the key it is given, whatever credential the answer names.
        if (credential.rawId !== passkey.credential_id) return yield* refused("the assertion is of another credential")
        // Some authenticators answer an empty user handle for a credential that is not discoverable.
        const handle = credential.response.userHandle
        if (
          handle !== undefined &&
          handle !== null &&
          handle !== "" &&
          handle !== b64url(userHandle(passkey.user_id))
        ) {
          return yield* refused("the user handle is not the passkey owner's")
        }
        const verdict = yield* verifying(() =>
          verifyAuthenticationResponse({
            ...expected,
            response: authenticationResponse(credential),
            expectedChallenge,
            // A stored counter of 0 turns the library's own counter check off (it refuses only
            // when one of the counts is non-zero and the reported one is not greater): the
            // domain's sign-count rule decides, with its compare-and-swap.
            credential: {
              id: passkey.credential_id,
              publicKey: Buffer.from(passkey.public_key, "base64url"),
              counter: 0
            }
          })
        )
        if (!verdict.verified) return yield* refused("the signature did not verify")
        return {
          sign_count: verdict.authenticationInfo.newCounter,
          user_verified: verdict.authenticationInfo.userVerified,
          backed_up: verdict.authenticationInfo.credentialBackedUp
        }
      })
  })
}

export const layer = (options: WebAuthnOptions) => Layer.succeed(WebAuthn, make(options))
