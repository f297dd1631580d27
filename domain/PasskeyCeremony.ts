import { Schema } from "effect"

/**
 * The wire formats of the WebAuthn ceremonies (the JSON forms of the browser's options and
 * answers): what the passkey routes send and take, shared by the relying party and the HTTP
 * definitions, so a client can import them without the server.
 */

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
