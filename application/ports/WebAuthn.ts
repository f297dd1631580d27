import { Context, type Effect, type Option, Schema } from "effect"
import type { CredentialRef, Passkey } from "../../domain/Passkey.js"
import type {
  AuthenticationCredential,
  CreationOptions,
  RegistrationCredential,
  RequestOptions
} from "../../domain/PasskeyCeremony.js"
import type { UserId } from "../../domain/User.js"

export {
  AuthenticationCredential,
  CreationOptions,
  CredentialDescriptor,
  RegistrationCredential,
  RequestOptions
} from "../../domain/PasskeyCeremony.js"

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
