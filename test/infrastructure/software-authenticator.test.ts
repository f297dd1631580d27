import { describe, expect, it } from "@effect/vitest"
import {
  generateAuthenticationOptions,
  generateRegistrationOptions,
  type VerifiedRegistrationResponse,
  verifyAuthenticationResponse,
  verifyRegistrationResponse,
  type WebAuthnCredential
} from "@simplewebauthn/server"
import {
  type AuthenticateOverrides,
  encodeCbor,
  type KeyAlgorithm,
  type RegisterOverrides,
  SoftwareAuthenticator
} from "../support/SoftwareAuthenticator.js"

const RP_ID = "localhost"
const ORIGIN = "http://localhost:8000"
const USER_ID = new TextEncoder().encode("01890a5d-ac96-774b-bcce-b302099a8057")

const registrationOptions = () =>
  generateRegistrationOptions({
    rpName: "Portcullis",
    rpID: RP_ID,
    userName: "alice@example.com",
    userID: USER_ID,
    supportedAlgorithmIDs: [-7, -8, -257]
  })

/** Registers a credential and answers the library's verdict and what to store. */
const register = async (
  authenticator: SoftwareAuthenticator,
  overrides: RegisterOverrides = {},
  expected: { readonly origin?: string; readonly requireUserVerification?: boolean } = {}
) => {
  const options = await registrationOptions()
  const response = authenticator.register(options, overrides)
  const verdict = await verifyRegistrationResponse({
    response,
    expectedChallenge: options.challenge,
    expectedOrigin: expected.origin ?? ORIGIN,
    expectedRPID: RP_ID,
    requireUserVerification: expected.requireUserVerification ?? true
  })
  return { response, verdict }
}

const credentialOf = (verdict: VerifiedRegistrationResponse): WebAuthnCredential => {
  if (!verdict.verified) throw new Error("registration not verified")
  return { ...verdict.registrationInfo.credential, counter: 0 }
}

/** Signs in with a registered credential and answers the library's verdict. */
const authenticate = async (
  authenticator: SoftwareAuthenticator,
  credential: WebAuthnCredential,
  overrides: AuthenticateOverrides = {},
  expected: { readonly requireUserVerification?: boolean; readonly allowCredentials?: boolean } = {}
) => {
  const options = await generateAuthenticationOptions({
    rpID: RP_ID,
    ...(expected.allowCredentials === false ? {} : { allowCredentials: [{ id: credential.id }] })
  })
  const response = authenticator.authenticate(options, overrides)
  const verdict = await verifyAuthenticationResponse({
    response,
    expectedChallenge: options.challenge,
    expectedOrigin: ORIGIN,
    expectedRPID: RP_ID,
    credential,
    requireUserVerification: expected.requireUserVerification ?? true
  })
  return { response, verdict }
}

describe("encodeCbor (RFC 8949 appendix A vectors)", () => {
  const vectors: ReadonlyArray<readonly [Parameters<typeof encodeCbor>[0], string]> = [
    [0, "00"],
    [23, "17"],
    [24, "1818"],
    [100, "1864"],
    [1000, "1903e8"],
    [1000000, "1a000f4240"],
    [-1, "20"],
    [-10, "29"],
    [-100, "3863"],
    [-1000, "3903e7"],
    ["", "60"],
    ["a", "6161"],
    ["IETF", "6449455446"],
    ["\u00fc", "62c3bc"],
    [new Uint8Array(), "40"],
    [Uint8Array.from([1, 2, 3, 4]), "4401020304"],
    [new Map(), "a0"],
    [
      new Map([
        [1, 2],
        [3, 4]
      ]),
      "a201020304"
    ],
    [new Map([["a", new Map([["b", "c"]])]]), "a16161a161626163"]
  ]
  for (const [value, hex] of vectors) {
    it(`encodes ${JSON.stringify(value instanceof Map ? [...value] : value)} as ${hex}`, () => {
      expect(encodeCbor(value).toString("hex")).toBe(hex)
    })
  }
})

for (const algorithm of ["ES256", "EdDSA"] as const satisfies ReadonlyArray<KeyAlgorithm>) {
  describe(`SoftwareAuthenticator with ${algorithm}, verified by @simplewebauthn/server`, () => {
    it("registers a credential the library accepts, with attestation none, counter 0 and its transports", async () => {
      const authenticator = new SoftwareAuthenticator({ transports: ["internal", "hybrid"] })
      const { response, verdict } = await register(authenticator, { algorithm })
      expect(verdict.verified).toBe(true)
      const info = verdict.registrationInfo
      expect(info?.fmt).toBe("none")
      expect(info?.credential.id).toBe(response.id)
      expect(info?.credential.counter).toBe(0)
      expect(info?.credential.transports).toEqual(["internal", "hybrid"])
      expect(info?.userVerified).toBe(true)
      expect(info?.credentialBackedUp).toBe(false)
      expect(info?.credentialDeviceType).toBe("singleDevice")
      expect(response.response.publicKeyAlgorithm).toBe(algorithm === "ES256" ? -7 : -8)
      expect(authenticator.credentials).toMatchObject([{ id: response.id, algorithm, rpId: RP_ID, signCount: 0 }])
    })

    it("signs assertions the library accepts, counting up from the stored counter", async () => {
      const authenticator = new SoftwareAuthenticator()
      const credential = credentialOf((await register(authenticator, { algorithm })).verdict)
      const first = await authenticate(authenticator, credential)
      expect(first.verdict.verified).toBe(true)
      expect(first.verdict.authenticationInfo.newCounter).toBe(1)
      expect(first.verdict.authenticationInfo.userVerified).toBe(true)
      const second = await authenticate(authenticator, { ...credential, counter: 1 })
      expect(second.verdict.verified).toBe(true)
      expect(second.verdict.authenticationInfo.newCounter).toBe(2)
      if (algorithm === "ES256") {
        // A DER SEQUENCE, not the raw r ‖ s of WebCrypto.
        expect(Buffer.from(first.response.response.signature, "base64url")[0]).toBe(0x30)
      }
    })

    it("a tampered assertion does not verify", async () => {
      const authenticator = new SoftwareAuthenticator()
      const credential = credentialOf((await register(authenticator, { algorithm })).verdict)
      const options = await generateAuthenticationOptions({ rpID: RP_ID, allowCredentials: [{ id: credential.id }] })
      const response = authenticator.authenticate(options)
      const data = Buffer.from(response.response.authenticatorData, "base64url")
      data[data.length - 1] = (data[data.length - 1] ?? 0) ^ 1
      const tampered = {
        ...response,
        response: { ...response.response, authenticatorData: data.toString("base64url") }
      }
      const verdict = await verifyAuthenticationResponse({
        response: tampered,
        expectedChallenge: options.challenge,
        expectedOrigin: ORIGIN,
        expectedRPID: RP_ID,
        credential
      })
      expect(verdict.verified).toBe(false)
    })
  })
}

describe("SoftwareAuthenticator knobs", () => {
  it("a wrong origin is refused at registration and at sign-in", async () => {
    const authenticator = new SoftwareAuthenticator()
    await expect(register(authenticator, { origin: "https://evil.example" })).rejects.toThrow(/origin/)
    const credential = credentialOf((await register(authenticator)).verdict)
    await expect(authenticate(authenticator, credential, { origin: "https://evil.example" })).rejects.toThrow(/origin/)
  })

  it("a wrong RP ID is refused at registration and at sign-in", async () => {
    const authenticator = new SoftwareAuthenticator()
    await expect(register(authenticator, { rpId: "evil.example" })).rejects.toThrow(/RP ID/)
    const credential = credentialOf((await register(authenticator)).verdict)
    await expect(authenticate(authenticator, credential, { rpId: "evil.example" })).rejects.toThrow(/RP ID/)
  })

  it("without user verification, a ceremony that requires it is refused, and one that does not is accepted", async () => {
    const authenticator = new SoftwareAuthenticator({ flags: { uv: false } })
    await expect(register(authenticator)).rejects.toThrow(/verification/)
    const { verdict } = await register(authenticator, {}, { requireUserVerification: false })
    expect(verdict.registrationInfo?.userVerified).toBe(false)
    const credential = credentialOf(verdict)
    await expect(authenticate(authenticator, credential)).rejects.toThrow(/verification/)
    const signed = await authenticate(authenticator, credential, {}, { requireUserVerification: false })
    expect(signed.verdict.verified).toBe(true)
    expect(signed.verdict.authenticationInfo.userVerified).toBe(false)
  })

  it("without user presence, a sign-in is refused", async () => {
    const authenticator = new SoftwareAuthenticator()
    const credential = credentialOf((await register(authenticator)).verdict)
    await expect(authenticate(authenticator, credential, { flags: { up: false } })).rejects.toThrow(/present/)
  })

  it("the backup flags make a synced, backed-up credential", async () => {
    const authenticator = new SoftwareAuthenticator({ flags: { be: true, bs: true } })
    const { verdict } = await register(authenticator)
    expect(verdict.registrationInfo?.credentialDeviceType).toBe("multiDevice")
    expect(verdict.registrationInfo?.credentialBackedUp).toBe(true)
    const signed = await authenticate(authenticator, credentialOf(verdict))
    expect(signed.verdict.authenticationInfo.credentialBackedUp).toBe(true)
  })

  it("counters: fixed repeats, zero reports 0, and a set or given count is reported", async () => {
    const fixed = new SoftwareAuthenticator({ counter: "fixed" })
    const fixedCredential = credentialOf((await register(fixed)).verdict)
    fixed.setSignCount(fixedCredential.id, 7)
    for (const _ of [1, 2]) {
      const { verdict } = await authenticate(fixed, fixedCredential)
      expect(verdict.authenticationInfo.newCounter).toBe(7)
    }

    const zero = new SoftwareAuthenticator({ counter: "zero" })
    const zeroCredential = credentialOf((await register(zero)).verdict)
    for (const _ of [1, 2]) {
      const { verdict } = await authenticate(zero, zeroCredential)
      expect(verdict.authenticationInfo.newCounter).toBe(0)
    }

    const counting = new SoftwareAuthenticator()
    const countingCredential = credentialOf((await register(counting)).verdict)
    counting.setSignCount(countingCredential.id, 41)
    expect((await authenticate(counting, countingCredential)).verdict.authenticationInfo.newCounter).toBe(42)
    const given = await authenticate(counting, countingCredential, { signCount: 0xffff_ffff })
    expect(given.verdict.authenticationInfo.newCounter).toBe(0xffff_ffff)
    expect(counting.credentials[0]?.signCount).toBe(0xffff_ffff)
  })

  it("a discoverable credential answers options without allowCredentials, with its user handle", async () => {
    const authenticator = new SoftwareAuthenticator()
    const { response, verdict } = await register(authenticator)
    const { response: assertion } = await authenticate(
      authenticator,
      credentialOf(verdict),
      {},
      { allowCredentials: false }
    )
    expect(assertion.id).toBe(response.id)
    expect(assertion.response.userHandle).toBe(Buffer.from(USER_ID).toString("base64url"))
    const overridden = await authenticate(authenticator, credentialOf(verdict), { userHandle: "b3RoZXI" })
    expect(overridden.response.response.userHandle).toBe("b3RoZXI")
    const none = await authenticate(authenticator, credentialOf(verdict), { userHandle: null })
    expect(none.response.response.userHandle).toBeUndefined()
  })

  it("a non-discoverable credential needs allowCredentials and answers no user handle", async () => {
    const authenticator = new SoftwareAuthenticator({ resident: false })
    const credential = credentialOf((await register(authenticator)).verdict)
    await expect(authenticate(authenticator, credential, {}, { allowCredentials: false })).rejects.toThrow(
      /NotAllowedError/
    )
    const { response, verdict } = await authenticate(authenticator, credential)
    expect(verdict.verified).toBe(true)
    expect(response.response.userHandle).toBeUndefined()
  })

  it("refuses to register again where excludeCredentials lists a credential it holds", async () => {
    const authenticator = new SoftwareAuthenticator()
    const { response } = await register(authenticator)
    const options = await generateRegistrationOptions({
      rpName: "Portcullis",
      rpID: RP_ID,
      userName: "alice@example.com",
      excludeCredentials: [{ id: response.id }]
    })
    expect(() => authenticator.register(options)).toThrow(/InvalidStateError/)
  })

  it("picks the first offered algorithm it supports, and a reused credential id replaces the credential", async () => {
    const authenticator = new SoftwareAuthenticator()
    const options = await generateRegistrationOptions({
      rpName: "Portcullis",
      rpID: RP_ID,
      userName: "alice@example.com",
      supportedAlgorithmIDs: [-257, -8, -7]
    })
    const first = authenticator.register(options)
    expect(first.response.publicKeyAlgorithm).toBe(-8)
    authenticator.register(options, { credentialId: first.id, algorithm: "ES256" })
    expect(authenticator.credentials).toMatchObject([{ id: first.id, algorithm: "ES256" }])
  })
})
