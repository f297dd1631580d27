import { expect } from "@effect/vitest"
import { Effect } from "effect"
import { call, type Session } from "./flows.js"
import type {
  AuthenticateOverrides,
  CreationOptionsLike,
  RegisterOverrides,
  RequestOptionsLike,
  SoftwareAuthenticator
} from "./SoftwareAuthenticator.js"
import type { Reply } from "./TestApp.js"

/** The origin the software authenticator writes into clientDataJSON by default. */
export const origin = "http://localhost:8000"

/** Passkeys on for the relying party `localhost`, as for local development. */
export const passkeyEnv: Record<string, string> = {
  SERVICE_PASSKEY_ENABLED: "true",
  SERVICE_PASSKEY_RP_ID: "localhost",
  SERVICE_PASSKEY_RP_NAME: "Portcullis tests",
  SERVICE_PASSKEY_ORIGINS: origin
}

export type WithKey<T> = T & { readonly challenge_key: string }

export const registerBegin = (session: Session) => call("POST", "/passkeys/register/begin", { token: session.access })

export const registerComplete = (session: Session, body: unknown) =>
  call("POST", "/passkeys/register/complete", { token: session.access, json: body })

/** A whole registration: options, the authenticator's answer, the completion's reply. */
export const registerPasskey = (
  session: Session,
  authenticator: SoftwareAuthenticator,
  overrides: RegisterOverrides = {},
  device_name = "Test laptop"
) =>
  Effect.gen(function* () {
    const begin = yield* registerBegin(session)
    expect(begin.status).toBe(200)
    const options = begin.body as WithKey<CreationOptionsLike>
    const credential = authenticator.register(options, overrides)
    const complete = yield* registerComplete(session, { challenge_key: options.challenge_key, credential, device_name })
    return { options, credential, complete }
  })

/** Registers a passkey and fails the test unless it answers 201; answers the stored passkey's id. */
export const addPasskey = (session: Session, authenticator: SoftwareAuthenticator, overrides: RegisterOverrides = {}) =>
  Effect.gen(function* () {
    const { complete, credential } = yield* registerPasskey(session, authenticator, overrides)
    expect(complete.status).toBe(201)
    return { id: (complete.body as { id: string }).id, credentialId: credential.id }
  })

export const authenticateBegin = (email?: string, headers: Record<string, string> = {}) =>
  call("POST", "/passkeys/authenticate/begin", email === undefined ? { headers } : { json: { email }, headers })

export const authenticateComplete = (body: unknown, headers: Record<string, string> = {}) =>
  call("POST", "/passkeys/authenticate/complete", { json: body, headers })

/** Options from authenticate/begin; fails the test unless it answers 200. */
export const signInOptions = (email?: string) =>
  Effect.gen(function* () {
    const begin = yield* authenticateBegin(email)
    expect(begin.status).toBe(200)
    return begin.body as WithKey<RequestOptionsLike>
  })

/** A whole passkey sign-in: options (for `email`, else discoverable), the assertion, the completion's reply. */
export const passkeySignIn = (
  authenticator: SoftwareAuthenticator,
  options: { readonly email?: string; readonly overrides?: AuthenticateOverrides } = {}
): Effect.Effect<Reply, never, import("./TestApp.js").TestApp> =>
  Effect.gen(function* () {
    const begun = yield* signInOptions(options.email)
    const credential = authenticator.authenticate(begun, options.overrides)
    return yield* authenticateComplete({ challenge_key: begun.challenge_key, credential })
  })
