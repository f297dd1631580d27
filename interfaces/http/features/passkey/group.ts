import * as HttpApiEndpoint from "@effect/platform/HttpApiEndpoint"
import * as HttpApiGroup from "@effect/platform/HttpApiGroup"
import * as HttpApiSchema from "@effect/platform/HttpApiSchema"
import * as OpenApi from "@effect/platform/OpenApi"
import { Schema } from "effect"
import {
  AuthenticationError,
  LastSignInMethodError,
  PasskeyNotFoundError,
  PasskeyRegistrationError,
  ReauthenticationRequiredError,
  StoreUnavailableError
} from "../../../../domain/errors.js"
import { AuthenticationChallengeKey, PasskeyInfo, RegistrationChallengeKey } from "../../../../domain/Passkey.js"
import {
  AuthenticationCredential,
  CreationOptions,
  RegistrationCredential,
  RequestOptions
} from "../../../../domain/PasskeyCeremony.js"
import { hasControlCharacter } from "../../../../domain/Text.js"
import { LoginResponse } from "../../../../domain/Token.js"
import { Email } from "../../../../domain/User.js"
import { type ApiShape, limited, listOf, placed, strict } from "../../Api.js"
import { declared } from "../../problemSchemas.js"
import { Authentication, PasskeyRegisterLimit } from "../../security.js"

const challengeKeyDescription = "Hand it back with the ceremony's answer; it is good once, for PASSKEY_CHALLENGE_TTL."

const RegistrationStart = Schema.Struct({
  ...CreationOptions.fields,
  challenge_key: Schema.String.annotations({ description: challengeKeyDescription })
}).annotations({
  identifier: "PasskeyRegistrationOptions",
  examples: [
    {
      rp: { name: "Example", id: "example.com" },
      user: {
        id: "MDE5NWEzYzItN2IxZS03YzNhLTlkNGYtMmE2YjhjMGUxZjM3",
        name: "ada@example.com",
        displayName: "ada@example.com"
      },
      challenge: "u8Kf3Zx0c2Vl…",
      pubKeyCredParams: [
        { type: "public-key", alg: -8 },
        { type: "public-key", alg: -7 },
        { type: "public-key", alg: -257 }
      ],
      timeout: 60000,
      excludeCredentials: [
        {
          id: "KEbWNCc7NgaYnUyrNeFGX9_3Y-8oJ3KwzjnaiD1d1LVTxR7v3CaKfCz2Vy_g_MHSh7yJ8yL0Pxg6jo_o0hYiew",
          type: "public-key",
          transports: ["internal", "hybrid"]
        }
      ],
      authenticatorSelection: { residentKey: "preferred", requireResidentKey: false, userVerification: "preferred" },
      attestation: "none",
      extensions: { credProps: true },
      challenge_key: "passkey:reg:3f2b8c1e-9a4d-4e6f-8b7a-0c1d2e3f4a5b"
    }
  ]
})

const AuthenticationStart = Schema.Struct({
  ...RequestOptions.fields,
  challenge_key: Schema.String.annotations({ description: challengeKeyDescription })
}).annotations({
  identifier: "PasskeyAuthenticationOptions",
  examples: [
    {
      challenge: "pX7vQ2mT9kLs…",
      rpId: "example.com",
      timeout: 60000,
      userVerification: "preferred",
      challenge_key: "passkey:auth:7c9e6679-7425-40de-944b-e07fc1f90ae7"
    }
  ]
})

/** The name a user gives a passkey, to tell it apart in the list. */
const DeviceName = Schema.Trim.pipe(
  Schema.minLength(1, { message: () => "must not be empty" }),
  Schema.maxLength(100, { message: () => "has at most 100 characters" }),
  Schema.filter((name) => !hasControlCharacter(name), { message: () => "must not contain control characters" })
)

const RegisterCompleteRequest = strict({
  challenge_key: RegistrationChallengeKey,
  credential: RegistrationCredential,
  device_name: DeviceName
}).annotations({ identifier: "PasskeyRegistrationRequest" })

/** Optional: no body (or null) asks for discoverable credentials. */
const AuthenticateBeginRequest = Schema.NullOr(
  strict({ email: Schema.optional(Email) }).annotations({ identifier: "PasskeyAuthenticationStartRequest" })
)

const AuthenticateCompleteRequest = strict({
  challenge_key: AuthenticationChallengeKey,
  credential: AuthenticationCredential
}).annotations({ identifier: "PasskeyAuthenticationRequest" })

/** Any text: an id that is no passkey's, well-formed or not, is answered 404 like another user's. */
const PasskeyPath = Schema.Struct({ passkey_id: Schema.String.pipe(Schema.maxLength(128)) })

/**
 * Passwordless sign-in with passkeys (spec: passkey routes, rules 1–6). Every sign-in failure
 * answers the one 401 of any failed sign-in.
 */
export const passkeyGroup = (shape: ApiShape) =>
  placed(
    { prefix: shape.authPrefix, title: "Passkeys", description: "Passwordless sign-in with passkeys." },
    HttpApiGroup.make("passkey")
      .addError(declared(StoreUnavailableError))
      .add(
        HttpApiEndpoint.post("registerBegin", "/passkeys/register/begin")
          .annotate(OpenApi.Summary, "Start a passkey registration")
          .addSuccess(RegistrationStart)
          .addError(declared(ReauthenticationRequiredError))
          .annotate(
            OpenApi.Description,
            "Options for navigator.credentials.create, the caller's passkeys excluded, and the challenge_key to complete with."
          )
          // Named before Authentication, so that it runs after it (security.ts).
          .middleware(PasskeyRegisterLimit)
          .middleware(Authentication)
      )
      .add(
        HttpApiEndpoint.post("registerComplete", "/passkeys/register/complete")
          .annotate(OpenApi.Summary, "Register a passkey")
          .setPayload(RegisterCompleteRequest)
          .addSuccess(PasskeyInfo, { status: 201 })
          .addError(Schema.Union(declared(PasskeyRegistrationError), declared(ReauthenticationRequiredError)))
          .annotate(
            OpenApi.Description,
            "Verifies the attestation (origin, RP ID, challenge, user verification) and stores the passkey."
          )
          .middleware(PasskeyRegisterLimit)
          .middleware(Authentication)
      )
      .add(
        HttpApiEndpoint.post("authenticateBegin", "/passkeys/authenticate/begin")
          .annotate(OpenApi.Summary, "Start a passkey sign-in")
          .setPayload(AuthenticateBeginRequest)
          .addSuccess(AuthenticationStart)
          .annotate(
            OpenApi.Description,
            "Options for navigator.credentials.get. With an email, allowCredentials is always present, possibly empty; without one, the browser offers its discoverable credentials."
          )
          .pipe(limited("passkey_auth"))
      )
      .add(
        HttpApiEndpoint.post("authenticateComplete", "/passkeys/authenticate/complete")
          .annotate(OpenApi.Summary, "Sign in with a passkey")
          .setPayload(AuthenticateCompleteRequest)
          .addSuccess(LoginResponse)
          .addError(declared(AuthenticationError))
          .annotate(
            OpenApi.Description,
            "Verifies the assertion and the sign count, then signs in as a password login does."
          )
          .pipe(limited("passkey_auth"))
      )
      .add(
        HttpApiEndpoint.get("list", "/passkeys")
          .annotate(OpenApi.Summary, "List passkeys")
          .addSuccess(listOf(PasskeyInfo))
          .middleware(Authentication)
      )
      .add(
        HttpApiEndpoint.del("delete", "/passkeys/:passkey_id")
          .annotate(OpenApi.Summary, "Delete a passkey")
          .setPath(PasskeyPath)
          .addSuccess(HttpApiSchema.NoContent)
          .addError(Schema.Union(declared(PasskeyNotFoundError), declared(LastSignInMethodError)))
          .middleware(Authentication)
      )
  )
