import { describe, expect, it } from "@effect/vitest"
import { Cause, Effect, Exit, Layer, Option, Schema } from "effect"
import {
  AuthenticationCredential,
  CreationOptions,
  RegistrationCredential,
  RequestOptions,
  WebAuthn
} from "../../application/ports/WebAuthn.js"
import { CredentialId, Passkey } from "../../domain/Passkey.js"
import { UserId } from "../../domain/User.js"
import * as WebAuthnSimplewebauthn from "../../infrastructure/webauthn/WebAuthnSimplewebauthn.js"
import { memoryPorts } from "../support/memoryPorts.js"
import {
  type AuthenticateOverrides,
  type RegisterOverrides,
  SoftwareAuthenticator
} from "../support/SoftwareAuthenticator.js"

const ORIGIN = "http://localhost:8000"
const settings = {
  rpId: "localhost",
  rpName: "Portcullis",
  origins: [ORIGIN, "http://localhost:5173"],
  requireUserVerification: true
}
const strict = WebAuthnSimplewebauthn.make(settings)
const lenient = WebAuthnSimplewebauthn.make({ ...settings, requireUserVerification: false })

const ALICE = {
  id: UserId.make("01890a5d-ac96-774b-bcce-b302099a8057"),
  name: "alice@example.com",
  displayName: "Alice"
}
const BOB = UserId.make("01890a5d-ac96-774b-bcce-b302099a8058")
const handleOf = (id: string) => Buffer.from(id, "utf8").toString("base64url")

// Through the port's schemas, as the HTTP interface will decode what the browser sends.
const asRegistration = Schema.decodeUnknownSync(RegistrationCredential)
const asAssertion = Schema.decodeUnknownSync(AuthenticationCredential)

type RelyingParty = typeof WebAuthn.Service

/** Runs a registration ceremony end to end; answers what to store, or the refusal. */
const register = (authenticator: SoftwareAuthenticator, overrides: RegisterOverrides = {}, rp = strict) =>
  Effect.gen(function* () {
    const options = yield* rp.registrationOptions(ALICE, [])
    return yield* rp.verifyRegistration(asRegistration(authenticator.register(options, overrides)), options.challenge)
  })

/** Registers a passkey for Alice with a verifying relying party, as it would be stored. */
const registered = (authenticator: SoftwareAuthenticator, overrides: RegisterOverrides = {}) =>
  Effect.map(register(authenticator, overrides, lenient), (credential) => ({ ...credential, user_id: ALICE.id }))

/** Runs an authentication ceremony with the stored passkey; answers what was verified, or the refusal. */
const authenticate = (
  authenticator: SoftwareAuthenticator,
  passkey: Effect.Effect.Success<ReturnType<typeof registered>>,
  overrides: AuthenticateOverrides = {},
  rp: RelyingParty = strict
) =>
  Effect.gen(function* () {
    const options = yield* rp.authenticationOptions(Option.some([passkey]))
    return yield* rp.verifyAuthentication(
      asAssertion(authenticator.authenticate(options, overrides)),
      options.challenge,
      passkey
    )
  })

/** "accepted", or the refusal's tag: a typed failure, never a defect (which would show as one). */
const refusal = <A, E extends { readonly _tag: string }>(effect: Effect.Effect<A, E>) =>
  Effect.map(
    Effect.exit(effect),
    Exit.match({
      onSuccess: () => "accepted",
      onFailure: (cause) =>
        Option.match(Cause.failureOption(cause), {
          onNone: () => `defect: ${Cause.pretty(cause)}`,
          onSome: (error) => error._tag
        })
    })
  )

describe("WebAuthnSimplewebauthn options", () => {
  it.effect("registration options name the RP and the user, offer ES256, EdDSA and RS256, and exclude", () =>
    Effect.gen(function* () {
      const options = yield* strict.registrationOptions(ALICE, [
        { credential_id: CredentialId.make("q83vEjRWeJA"), transports: ["internal", "hybrid"] },
        { credential_id: CredentialId.make("AQID"), transports: [] }
      ])
      expect(Schema.encodeSync(CreationOptions)(options)).toEqual({
        rp: { name: "Portcullis", id: "localhost" },
        user: { id: handleOf(ALICE.id), name: "alice@example.com", displayName: "Alice" },
        challenge: options.challenge,
        pubKeyCredParams: [
          { type: "public-key", alg: -7 },
          { type: "public-key", alg: -8 },
          { type: "public-key", alg: -257 }
        ],
        timeout: 60_000,
        excludeCredentials: [
          { id: "q83vEjRWeJA", type: "public-key", transports: ["internal", "hybrid"] },
          { id: "AQID", type: "public-key", transports: [] }
        ],
        authenticatorSelection: { residentKey: "preferred", requireResidentKey: false, userVerification: "required" },
        attestation: "none",
        extensions: { credProps: true }
      })
      expect(Buffer.from(options.challenge, "base64url")).toHaveLength(32)
      expect((yield* strict.registrationOptions(ALICE, [])).challenge).not.toBe(options.challenge)
      const preferred = yield* lenient.registrationOptions(ALICE, [])
      expect(preferred.authenticatorSelection.userVerification).toBe("preferred")
    })
  )

  it.effect(
    "authentication options list the allowed credentials, an empty list too, or none for discoverable ones",
    () =>
      Effect.gen(function* () {
        const listed = yield* strict.authenticationOptions(
          Option.some([{ credential_id: CredentialId.make("q83vEjRWeJA"), transports: ["usb"] }])
        )
        expect(Schema.encodeSync(RequestOptions)(listed)).toEqual({
          challenge: listed.challenge,
          rpId: "localhost",
          timeout: 60_000,
          userVerification: "required",
          allowCredentials: [{ id: "q83vEjRWeJA", type: "public-key", transports: ["usb"] }]
        })
        expect((yield* strict.authenticationOptions(Option.some([]))).allowCredentials).toEqual([])
        const discoverable = yield* lenient.authenticationOptions(Option.none())
        expect(Object.keys(discoverable)).not.toContain("allowCredentials")
        expect(discoverable.userVerification).toBe("preferred")
        expect(discoverable.challenge).not.toBe(listed.challenge)
      })
  )
})

for (const algorithm of ["ES256", "EdDSA"] as const) {
  describe(`WebAuthnSimplewebauthn ceremonies with ${algorithm}`, () => {
    it.effect("a registration gives the credential to store, and sign-ins with it verify", () =>
      Effect.gen(function* () {
        const authenticator = new SoftwareAuthenticator({ transports: ["internal", "hybrid"] })
        const credential = yield* register(authenticator, { algorithm })
        expect(credential).toMatchObject({ sign_count: 0, transports: ["internal", "hybrid"], backed_up: false })
        expect(credential.credential_id).toBe(authenticator.credentials[0]?.id)
        // What is verified is what a Passkey holds.
        const passkey = { ...credential, user_id: ALICE.id }
        Schema.validateSync(Passkey.pipe(Schema.pick("credential_id", "public_key", "sign_count")))(passkey)

        expect(yield* authenticate(authenticator, passkey)).toEqual({
          sign_count: 1,
          user_verified: true,
          backed_up: false
        })
        expect((yield* authenticate(authenticator, passkey)).sign_count).toBe(2)
      })
    )
  })
}

describe("WebAuthnSimplewebauthn refusals", () => {
  it.effect("a registration from another origin, for another RP ID, or without user verification is refused", () =>
    Effect.gen(function* () {
      const authenticator = new SoftwareAuthenticator()
      expect(yield* refusal(register(authenticator, { origin: "https://evil.example" }))).toBe(
        "WebAuthnVerificationError"
      )
      expect(yield* refusal(register(authenticator, { rpId: "evil.example" }))).toBe("WebAuthnVerificationError")
      expect(yield* refusal(register(authenticator, { flags: { uv: false } }))).toBe("WebAuthnVerificationError")
      expect(yield* refusal(register(authenticator, { flags: { uv: false } }, lenient))).toBe("accepted")
      expect(yield* refusal(register(authenticator, { origin: "http://localhost:5173" }))).toBe("accepted")
    })
  )

  it.effect("a registration answering another challenge, or malformed, is refused without an exception", () =>
    Effect.gen(function* () {
      const authenticator = new SoftwareAuthenticator()
      const options = yield* strict.registrationOptions(ALICE, [])
      const response = asRegistration(authenticator.register(options))
      const other = (yield* strict.registrationOptions(ALICE, [])).challenge
      expect(yield* refusal(strict.verifyRegistration(response, other))).toBe("WebAuthnVerificationError")

      const broken = [
        { ...response, rawId: "AQID" },
        { ...response, response: { ...response.response, attestationObject: "bm90IGNib3I" } },
        { ...response, response: { ...response.response, clientDataJSON: "e30" } },
        { ...response, response: { ...response.response, clientDataJSON: "!!" } }
      ]
      for (const credential of broken) {
        expect(yield* refusal(strict.verifyRegistration(credential, options.challenge))).toBe(
          "WebAuthnVerificationError"
        )
      }
    })
  )

  it.effect("a sign-in from another origin, for another RP ID, or without user verification is refused", () =>
    Effect.gen(function* () {
      const authenticator = new SoftwareAuthenticator()
      const passkey = yield* registered(authenticator)
      for (const overrides of [
        { origin: "https://evil.example" },
        { rpId: "evil.example" },
        { flags: { uv: false } }
      ]) {
        expect(yield* refusal(authenticate(authenticator, passkey, overrides))).toBe("WebAuthnVerificationError")
      }
      const unverified = yield* authenticate(authenticator, passkey, { flags: { uv: false } }, lenient)
      expect(unverified.user_verified).toBe(false)
    })
  )

  it.effect("an assertion for another challenge, with a bad signature, or by another credential is refused", () =>
    Effect.gen(function* () {
      const authenticator = new SoftwareAuthenticator()
      const passkey = yield* registered(authenticator)
      const other = yield* registered(authenticator)
      const options = yield* strict.authenticationOptions(Option.some([passkey]))
      const assertion = asAssertion(authenticator.authenticate(options))
      const verify = (credential: AuthenticationCredential, stored = passkey, challenge = options.challenge) =>
        refusal(strict.verifyAuthentication(credential, challenge, stored))

      expect(yield* verify(assertion)).toBe("accepted")
      const another = (yield* strict.authenticationOptions(Option.none())).challenge
      expect(yield* verify(assertion, passkey, another)).toBe("WebAuthnVerificationError")
      const signature = Buffer.from(assertion.response.signature, "base64url")
      signature[signature.length - 1] = (signature[signature.length - 1] ?? 0) ^ 1
      const forged = { ...assertion, response: { ...assertion.response, signature: signature.toString("base64url") } }
      expect(yield* verify(forged)).toBe("WebAuthnVerificationError")
      // Checked against another passkey: the one the assertion names, or the key that signed it.
      expect(yield* verify(assertion, other)).toBe("WebAuthnVerificationError")
      expect(yield* verify(assertion, { ...passkey, public_key: other.public_key })).toBe("WebAuthnVerificationError")
      expect(yield* verify({ ...assertion, response: { ...assertion.response, authenticatorData: "AA" } })).toBe(
        "WebAuthnVerificationError"
      )
    })
  )

  it.effect("a user handle must be the passkey owner's; none, or an empty one, is accepted", () =>
    Effect.gen(function* () {
      const authenticator = new SoftwareAuthenticator()
      const passkey = yield* registered(authenticator)
      expect(yield* refusal(authenticate(authenticator, passkey))).toBe("accepted")
      expect(yield* refusal(authenticate(authenticator, passkey, { userHandle: handleOf(BOB) }))).toBe(
        "WebAuthnVerificationError"
      )
      expect(yield* refusal(authenticate(authenticator, passkey, { userHandle: null }))).toBe("accepted")
      expect(yield* refusal(authenticate(authenticator, passkey, { userHandle: "" }))).toBe("accepted")
    })
  )
})

describe("WebAuthnSimplewebauthn leaves the sign count to the domain's rule", () => {
  it.effect("a count that did not move forward, or went back, is reported, not refused", () =>
    Effect.gen(function* () {
      const authenticator = new SoftwareAuthenticator({ counter: "fixed" })
      const passkey = yield* registered(authenticator)
      const id = passkey.credential_id
      authenticator.setSignCount(id, 5)
      expect((yield* authenticate(authenticator, { ...passkey, sign_count: 5 })).sign_count).toBe(5)
      expect((yield* authenticate(authenticator, { ...passkey, sign_count: 5 })).sign_count).toBe(5)
      authenticator.setSignCount(id, 1)
      expect((yield* authenticate(authenticator, { ...passkey, sign_count: 5 })).sign_count).toBe(1)
    })
  )

  it.effect("a synced passkey reports 0 and its backup state", () =>
    Effect.gen(function* () {
      const authenticator = new SoftwareAuthenticator({ counter: "zero", flags: { be: true, bs: true } })
      const passkey = yield* registered(authenticator)
      expect(passkey.backed_up).toBe(true)
      expect(yield* authenticate(authenticator, passkey)).toEqual({
        sign_count: 0,
        user_verified: true,
        backed_up: true
      })
    })
  )
})

describe("WebAuthn with passkeys off", () => {
  // The composition root leaves simplewebauthn unloaded then; code that composes the use cases
  // itself still gets a working port.
  it.effect("the port of the composition root still answers, loading its adapter on first use", () =>
    Effect.gen(function* () {
      const webAuthn = yield* WebAuthn
      const options = yield* webAuthn.registrationOptions(ALICE, [])
      expect(options.rp).toEqual({ id: "localhost", name: "Portcullis" })
      expect((yield* webAuthn.authenticationOptions(Option.none())).challenge).not.toBe(options.challenge)
    }).pipe(Effect.provide(memoryPorts(Layer.empty).layer))
  )
})
