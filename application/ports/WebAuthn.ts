import { Context, type Effect, type Option, Schema } from "effect"
import type { CredentialRef, Passkey } from "../../domain/Passkey.js"
import type { UserId } from "../../domain/User.js"

/** A credential as a browser is told of it, in excludeCredentials and allowCredentials. */
export const CredentialDescriptor = Schema.Struct({
  id: Schema.String,
  type: Schema.Literal("public-key"),
  transports: Schema.optional(Schema.Array(Schema.String))
})

const UserVerification = Schema.Literal("required", "preferred", "discouraged")

/** PublicKeyCredentialCreationOptionsJSON: what navigator.credentials.create is given. */
export const CreationOptions = Schema.Struct({
  rp: Schema.Struct({ name: Schema.String, id: Schema.String }),
  /** `id` is the user handle, base64url: the user's id as UTF-8. */
  user: Schema.Struct({ id: Schema.String, name: Schema.String, displayName: Schema.String }),
  /** base64url */
  challenge: Schema.String,
  pubKeyCredParams: Schema.Array(Schema.Struct({ type: Schema.Literal("public-key"), alg: Schema.Int })),
  /** Milliseconds. */
  timeout: Schema.Int,
  excludeCredentials: Schema.Array(CredentialDescriptor),
  authenticatorSelection: Schema.Struct({
    residentKey: Schema.Literal("discouraged", "preferred", "required"),
    requireResidentKey: Schema.Boolean,
    userVerification: UserVerification
  }),
  attestation: Schema.Literal("none"),
  extensions: Schema.Struct({ credProps: Schema.Boolean })
}).annotations({ identifier: "PublicKeyCredentialCreationOptions" })
export type CreationOptions = typeof CreationOptions.Type

/** PublicKeyCredentialRequestOptionsJSON: what navigator.credentials.get is given. */
export const RequestOptions = Schema.Struct({
  /** base64url */
  challenge: Schema.String,
  rpId: Schema.String,
  /** Milliseconds. */
  timeout: Schema.Int,
  userVerification: UserVerification,
  /** Absent: the browser offers the user's discoverable credentials for the RP. */
  allowCredentials: Schema.optional(Schema.Array(CredentialDescriptor))
}).annotations({ identifier: "PublicKeyCredentialRequestOptions" })
export type RequestOptions = typeof RequestOptions.Type

const ClientExtensionResults = Schema.Record({ key: Schema.String, value: Schema.Unknown })

/** The browser's answer to navigator.credentials.create (RegistrationResponseJSON), bytes in base64url. */
export const RegistrationCredential = Schema.Struct({
  id: Schema.String,
  rawId: Schema.String,
  type: Schema.Literal("public-key"),
  response: Schema.Struct({
    clientDataJSON: Schema.String,
    attestationObject: Schema.String,
    transports: Schema.optional(Schema.Array(Schema.String)),
    // Current browsers also send these; the attestation object holds the same, signed.
    authenticatorData: Schema.optional(Schema.String),
    publicKey: Schema.optional(Schema.NullOr(Schema.String)),
    publicKeyAlgorithm: Schema.optional(Schema.Int)
  }),
  clientExtensionResults: Schema.optional(ClientExtensionResults),
  authenticatorAttachment: Schema.optional(Schema.NullOr(Schema.String))
}).annotations({ identifier: "RegistrationCredential" })
export type RegistrationCredential = typeof RegistrationCredential.Type

/** The browser's answer to navigator.credentials.get (AuthenticationResponseJSON), bytes in base64url. */
export const AuthenticationCredential = Schema.Struct({
  id: Schema.String,
  rawId: Schema.String,
  type: Schema.Literal("public-key"),
  response: Schema.Struct({
    clientDataJSON: Schema.String,
    authenticatorData: Schema.String,
    signature: Schema.String,
    /** The user handle of a discoverable credential; null or absent otherwise. */
    userHandle: Schema.optional(Schema.NullOr(Schema.String))
  }),
  clientExtensionResults: Schema.optional(ClientExtensionResults),
  authenticatorAttachment: Schema.optional(Schema.NullOr(Schema.String))
}).annotations({ identifier: "AuthenticationCredential" })
export type AuthenticationCredential = typeof AuthenticationCredential.Type

/** What a verified registration gives of the new credential, to be stored as a Passkey. */
export type RegisteredCredential = Pick<
  Passkey,
  "credential_id" | "public_key" | "sign_count" | "transports" | "backed_up"
>

/** What a verified assertion reports. */
export interface VerifiedAssertion {
  /** The authenticator's sign count, unchecked: the sign-count rule decides (decideSignCount). */
  readonly sign_count: number
  readonly user_verified: boolean
  readonly backed_up: boolean
}

/**
 * A ceremony's answer did not verify: malformed, another challenge, origin or RP ID, no user
 * presence or verification, another credential or user, a bad signature. `reason` is for the
 * logs only: every cause gets one answer.
 */
export class WebAuthnVerificationError extends Schema.TaggedError<WebAuthnVerificationError>()(
  "WebAuthnVerificationError",
  { reason: Schema.String }
) {}

/**
 * The WebAuthn relying party: ceremony options with fresh challenges, and verification of the
 * browser's answers against the relying party's identity (PASSKEY_RP_ID, PASSKEY_ORIGINS) and
 * its user verification rule (PASSKEY_REQUIRE_USER_VERIFICATION). The caller keeps each
 * challenge (ChallengeStore) and hands it back to verify.
 */
export class WebAuthn extends Context.Tag("app/WebAuthn")<
  WebAuthn,
  {
    /** Registration options for the user, excluding the credentials the user has already. */
    readonly registrationOptions: (
      user: { readonly id: UserId; readonly name: string; readonly displayName: string },
      exclude: ReadonlyArray<CredentialRef>
    ) => Effect.Effect<CreationOptions>
    readonly verifyRegistration: (
      credential: RegistrationCredential,
      expectedChallenge: string
    ) => Effect.Effect<RegisteredCredential, WebAuthnVerificationError>
    /**
     * Authentication options: `allow` lists the credentials the browser may use (possibly none,
     * which is still a list); none leaves the choice to the browser among discoverable ones.
     */
    readonly authenticationOptions: (
      allow: Option.Option<ReadonlyArray<CredentialRef>>
    ) => Effect.Effect<RequestOptions>
    /**
     * Verifies an assertion against the stored passkey of the credential it names, and that a
     * user handle, when there is one, is the passkey owner's. The sign count is not checked.
     */
    readonly verifyAuthentication: (
      credential: AuthenticationCredential,
      expectedChallenge: string,
      passkey: Pick<Passkey, "credential_id" | "public_key" | "user_id">
    ) => Effect.Effect<VerifiedAssertion, WebAuthnVerificationError>
  }
>() {}
