import { createHash, generateKeyPairSync, type KeyObject, randomBytes, sign } from "node:crypto"
import type { AuthenticationResponseJSON, RegistrationResponseJSON } from "@simplewebauthn/server"

/** A CBOR value of the kinds WebAuthn's attestation object and COSE keys need. */
export type Cbor = number | string | Uint8Array | ReadonlyMap<Cbor, Cbor>

const cborHead = (major: number, n: number): Buffer => {
  const type = major << 5
  if (n < 24) return Buffer.from([type | n])
  if (n < 0x100) return Buffer.from([type | 24, n])
  if (n < 0x1_0000) return Buffer.from([type | 25, n >> 8, n & 0xff])
  const head = Buffer.alloc(5)
  head[0] = type | 26
  head.writeUInt32BE(n, 1)
  return head
}

/**
 * CBOR (RFC 8949) of integers up to 32 bits, byte strings, text strings and maps, the map's
 * entries in the order given: callers give them in CTAP2's canonical order.
 */
export const encodeCbor = (value: Cbor): Buffer => {
  if (typeof value === "number") {
    if (!Number.isInteger(value) || Math.abs(value) > 0xffff_ffff) throw new Error(`not a 32-bit integer: ${value}`)
    return value >= 0 ? cborHead(0, value) : cborHead(1, -1 - value)
  }
  if (typeof value === "string") {
    const text = Buffer.from(value, "utf8")
    return Buffer.concat([cborHead(3, text.length), text])
  }
  if (value instanceof Uint8Array) return Buffer.concat([cborHead(2, value.length), value])
  return Buffer.concat([cborHead(5, value.size), ...[...value].flatMap(([k, v]) => [encodeCbor(k), encodeCbor(v)])])
}

export type KeyAlgorithm = "ES256" | "EdDSA"
const COSE_ALGORITHM: Record<KeyAlgorithm, number> = { ES256: -7, EdDSA: -8 }

/** The authenticator data flags: user present, user verified, backup eligible, backed up. */
export interface Flags {
  readonly up: boolean
  readonly uv: boolean
  readonly be: boolean
  readonly bs: boolean
}

/** What each assertion reports: one more than the last, the same again, or 0 (no counter). */
export type CounterBehaviour = "incrementing" | "fixed" | "zero"

/** The knobs of an authenticator; each call may override any of them. */
export interface Settings {
  /** The origin the "browser" writes into clientDataJSON. */
  readonly origin?: string
  /** Signs for this RP ID instead of the one the options name (or the origin's host). */
  readonly rpId?: string
  readonly flags?: Partial<Flags>
  readonly counter?: CounterBehaviour
  /** The transports reported at registration. */
  readonly transports?: ReadonlyArray<string>
  /** Whether new credentials are discoverable (resident keys), usable without allowCredentials. */
  readonly resident?: boolean
}

export interface RegisterOverrides extends Settings {
  /** Forces the key type, even one the options do not offer. */
  readonly algorithm?: KeyAlgorithm
  /** Reuses a credential id (base64url), e.g. to register one credential twice. */
  readonly credentialId?: string
}

export interface AuthenticateOverrides extends Settings {
  /** Signs with this credential whatever allowCredentials says. */
  readonly credentialId?: string
  /** Reports exactly this sign count (and keeps it). */
  readonly signCount?: number
  /** The userHandle to answer, or null for none, in place of the credential's own. */
  readonly userHandle?: string | null
}

/** PublicKeyCredentialCreationOptionsJSON, as far as an authenticator reads it. */
export interface CreationOptionsLike {
  readonly rp: { readonly id?: string | undefined }
  readonly user: { readonly id: string }
  readonly challenge: string
  readonly pubKeyCredParams: ReadonlyArray<{ readonly alg: number }>
  readonly excludeCredentials?: ReadonlyArray<{ readonly id: string }> | undefined
}

/** PublicKeyCredentialRequestOptionsJSON, as far as an authenticator reads it. */
export interface RequestOptionsLike {
  readonly challenge: string
  readonly rpId?: string | undefined
  readonly allowCredentials?: ReadonlyArray<{ readonly id: string }> | undefined
}

/** A credential the authenticator holds, as tests may inspect it. */
export interface SoftwareCredential {
  /** base64url */
  readonly id: string
  readonly algorithm: KeyAlgorithm
  readonly rpId: string
  /** The user.id of the registration options (base64url): the userHandle of assertions. */
  readonly userHandle: string
  readonly resident: boolean
  readonly signCount: number
}

interface Held extends SoftwareCredential {
  readonly privateKey: KeyObject
  signCount: number
}

const DEFAULTS: Required<Omit<Settings, "rpId" | "flags">> & { readonly flags: Flags } = {
  origin: "http://localhost:8000",
  flags: { up: true, uv: true, be: false, bs: false },
  counter: "incrementing",
  transports: ["internal"],
  resident: true
}

const b64url = (bytes: Uint8Array) => Buffer.from(bytes).toString("base64url")
const sha256 = (data: Uint8Array | string) => createHash("sha256").update(data).digest()
const uint32 = (n: number) => {
  const bytes = Buffer.alloc(4)
  bytes.writeUInt32BE(n)
  return bytes
}

const flagsByte = (flags: Flags, attestedCredentialData: boolean) =>
  (flags.up ? 0x01 : 0) |
  (flags.uv ? 0x04 : 0) |
  (flags.be ? 0x08 : 0) |
  (flags.bs ? 0x10 : 0) |
  (attestedCredentialData ? 0x40 : 0)

/**
 * The public key as a COSE_Key { kty, alg, crv, x, y }, in canonical order: OKP, EdDSA, Ed25519
 * or EC2, ES256, P-256.
 */
const coseKey = (algorithm: KeyAlgorithm, publicKey: KeyObject): Buffer => {
  const { x, y } = publicKey.export({ format: "jwk" })
  const [kty, crv] = algorithm === "EdDSA" ? [1, 6] : [2, 1]
  const entries: Array<[Cbor, Cbor]> = [
    [1, kty],
    [3, COSE_ALGORITHM[algorithm]],
    [-1, crv]
  ]
  entries.push([-2, Buffer.from(x ?? "", "base64url")])
  if (y !== undefined) entries.push([-3, Buffer.from(y, "base64url")])
  return encodeCbor(new Map(entries))
}

/** WebAuthn wants ES256 signatures DER-encoded (WebCrypto would give the raw r ‖ s). */
const signWith = (credential: Held, data: Buffer) =>
  credential.algorithm === "EdDSA"
    ? sign(null, data, credential.privateKey)
    : sign("sha256", data, { key: credential.privateKey, dsaEncoding: "der" })

/**
 * A software WebAuthn authenticator together with the browser part of a ceremony: it answers
 * registration and authentication options with the JSON a browser sends the relying party
 * (attestation "none"), with ES256 (P-256) or EdDSA (Ed25519) keys held in memory.
 */
export class SoftwareAuthenticator {
  readonly #held: Array<Held> = []
  readonly #settings: Settings

  constructor(settings: Settings = {}) {
    this.#settings = settings
  }

  get credentials(): ReadonlyArray<SoftwareCredential> {
    return this.#held.map(({ privateKey: _, ...credential }) => credential)
  }

  /** Sets the counter a credential holds; the next assertions count from it. */
  setSignCount(credentialId: string, signCount: number): void {
    this.#find(credentialId).signCount = signCount
  }

  register(options: CreationOptionsLike, overrides: RegisterOverrides = {}): RegistrationResponseJSON {
    const settings = this.#resolve(overrides)
    const rpId = options.rp.id ?? new URL(settings.origin).hostname
    const excluded = new Set(options.excludeCredentials?.map((credential) => credential.id))
    if (this.#held.some((held) => held.rpId === rpId && excluded.has(held.id))) {
      throw new Error("InvalidStateError: the authenticator holds an excluded credential")
    }
    const algorithm =
      overrides.algorithm ??
      options.pubKeyCredParams
        .map((param) => (["ES256", "EdDSA"] as const).find((alg) => COSE_ALGORITHM[alg] === param.alg))
        .find((alg) => alg !== undefined)
    if (algorithm === undefined) throw new Error("NotSupportedError: no offered algorithm is supported")

    const { publicKey, privateKey } =
      algorithm === "EdDSA" ? generateKeyPairSync("ed25519") : generateKeyPairSync("ec", { namedCurve: "P-256" })
    const id = overrides.credentialId ?? b64url(randomBytes(32))
    const rawId = Buffer.from(id, "base64url")
    const held: Held = {
      id,
      algorithm,
      rpId,
      userHandle: options.user.id,
      resident: settings.resident,
      privateKey,
      signCount: 0
    }
    const index = this.#held.findIndex((other) => other.id === id)
    if (index >= 0) this.#held.splice(index, 1)
    this.#held.push(held)

    const length = Buffer.alloc(2)
    length.writeUInt16BE(rawId.length)
    const authenticatorData = Buffer.concat([
      sha256(settings.rpId ?? rpId),
      Buffer.from([flagsByte(settings.flags, true)]),
      uint32(held.signCount),
      Buffer.alloc(16), // AAGUID: zero, as browsers send it with attestation "none"
      length,
      rawId,
      coseKey(algorithm, publicKey)
    ])
    const attestationObject = encodeCbor(
      new Map<Cbor, Cbor>([
        ["fmt", "none"],
        ["attStmt", new Map()],
        ["authData", authenticatorData]
      ])
    )
    return {
      id,
      rawId: id,
      type: "public-key",
      response: {
        clientDataJSON: this.#clientData("webauthn.create", options.challenge, settings.origin),
        attestationObject: b64url(attestationObject),
        transports: [...settings.transports],
        publicKeyAlgorithm: COSE_ALGORITHM[algorithm],
        publicKey: b64url(publicKey.export({ format: "der", type: "spki" })),
        authenticatorData: b64url(authenticatorData)
      },
      clientExtensionResults: {},
      authenticatorAttachment: "platform"
    }
  }

  authenticate(options: RequestOptionsLike, overrides: AuthenticateOverrides = {}): AuthenticationResponseJSON {
    const settings = this.#resolve(overrides)
    const rpId = options.rpId ?? new URL(settings.origin).hostname
    const credential = this.#choose(rpId, options.allowCredentials ?? [], overrides.credentialId)
    credential.signCount =
      overrides.signCount ??
      { incrementing: credential.signCount + 1, fixed: credential.signCount, zero: 0 }[settings.counter]

    const authenticatorData = Buffer.concat([
      sha256(settings.rpId ?? rpId),
      Buffer.from([flagsByte(settings.flags, false)]),
      uint32(credential.signCount)
    ])
    const clientDataJSON = this.#clientData("webauthn.get", options.challenge, settings.origin)
    const signature = signWith(
      credential,
      Buffer.concat([authenticatorData, sha256(Buffer.from(clientDataJSON, "base64url"))])
    )
    const userHandle =
      overrides.userHandle === undefined ? (credential.resident ? credential.userHandle : null) : overrides.userHandle
    return {
      id: credential.id,
      rawId: credential.id,
      type: "public-key",
      response: {
        clientDataJSON,
        authenticatorData: b64url(authenticatorData),
        signature: b64url(signature),
        ...(userHandle === null ? {} : { userHandle })
      },
      clientExtensionResults: {},
      authenticatorAttachment: "platform"
    }
  }

  #resolve(overrides: Settings) {
    return {
      ...DEFAULTS,
      ...this.#settings,
      ...overrides,
      flags: { ...DEFAULTS.flags, ...this.#settings.flags, ...overrides.flags }
    }
  }

  #find(credentialId: string): Held {
    const held = this.#held.find((credential) => credential.id === credentialId)
    if (held === undefined) throw new Error(`no credential ${credentialId}`)
    return held
  }

  /** As a browser does: a listed credential, or without a list, a discoverable one of the RP. */
  #choose(rpId: string, allowed: ReadonlyArray<{ readonly id: string }>, forced: string | undefined): Held {
    if (forced !== undefined) return this.#find(forced)
    const listed = new Set(allowed.map((credential) => credential.id))
    const held = this.#held.find((credential) =>
      listed.size > 0 ? listed.has(credential.id) : credential.resident && credential.rpId === rpId
    )
    if (held === undefined) throw new Error("NotAllowedError: no credential of the authenticator is acceptable")
    return held
  }

  #clientData(type: "webauthn.create" | "webauthn.get", challenge: string, origin: string): string {
    return Buffer.from(JSON.stringify({ type, challenge, origin, crossOrigin: false })).toString("base64url")
  }
}
