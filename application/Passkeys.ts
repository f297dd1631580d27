import { DateTime, Duration, Effect, Option, Schema } from "effect"
import { Actor } from "../domain/Audit.js"
import { AuthEvent } from "../domain/Events.js"
import { AuthenticationError, PasskeyNotFoundError, PasskeyRegistrationError } from "../domain/errors.js"
import {
  AUTHENTICATION_CHALLENGE_PREFIX,
  CredentialId,
  decideSignCount,
  Passkey,
  PasskeyId,
  REGISTRATION_CHALLENGE_PREFIX,
  RegistrationChallenge,
  toPasskeyInfo
} from "../domain/Passkey.js"
import type { ClientInfo } from "../domain/Session.js"
import type { LoginResponse } from "../domain/Token.js"
import { normaliseEmail, toPublicUser, type User, UserId } from "../domain/User.js"
import { Removal, WayInChange } from "../domain/WaysIn.js"
import { Audit } from "./Audit.js"
import { AuthPolicy } from "./AuthPolicy.js"
import { countedSignIn } from "./metrics.js"
import { ChallengeStore } from "./ports/ChallengeStore.js"
import { Cryptography } from "./ports/Cryptography.js"
import { Events } from "./ports/Events.js"
import { PasskeyRepo } from "./ports/PasskeyRepo.js"
import { UserRepo } from "./ports/UserRepo.js"
import { type AuthenticationCredential, type RegistrationCredential, WebAuthn } from "./ports/WebAuthn.js"
import { type Principal, Sessions } from "./Sessions.js"
import { WaysIn } from "./WaysIn.js"

/** Nobody's id: what an unknown email's credentials are looked up under, so it costs what a known one does. */
const NOBODY = UserId.make("passkey:nobody")

const encodeRegistrationChallenge = Schema.encodeSync(RegistrationChallenge)
const decodeRegistrationChallenge = Schema.decodeUnknownOption(RegistrationChallenge)

/**
 * Passkey registration and sign-in (spec: passkey routes, rules 1–6). Each ceremony's challenge
 * is kept in the ChallengeStore for PASSKEY_CHALLENGE_TTL and taken at most once; the sign-count
 * and deletion rules are the domain's (domain/Passkey.ts), carried out here.
 */
export class Passkeys extends Effect.Service<Passkeys>()("app/Passkeys", {
  effect: Effect.gen(function* () {
    const webauthn = yield* WebAuthn
    const challenges = yield* ChallengeStore
    const passkeys = yield* PasskeyRepo
    const users = yield* UserRepo
    const crypto = yield* Cryptography
    const sessions = yield* Sessions
    const events = yield* Events
    const policy = yield* AuthPolicy
    const audit = yield* Audit
    const waysIn = yield* WaysIn

    const ttl = Duration.seconds(policy.passkeys.passkeyChallengeTtl)

    /** A fresh key for a challenge of the ceremony the prefix names. */
    const keyFor = (prefix: string) => Effect.map(crypto.randomId, (id) => `${prefix}${id}`)

    /** A refused registration: logged with its cause, answered the one way. */
    const registrationRefused = (reason: string) =>
      Effect.logInfo("passkey registration refused").pipe(
        Effect.annotateLogs({ reason }),
        Effect.zipRight(Effect.fail(new PasskeyRegistrationError()))
      )

    /** A refused sign-in: logged and recorded with its cause, answered like every failed sign-in. */
    const signInRefused = (reason: string, userId: UserId | null = null) =>
      Effect.logInfo("passkey sign-in refused").pipe(
        Effect.annotateLogs({ reason }),
        Effect.zipRight(
          audit.record({ type: "sign_in.failed", user_id: userId, details: { method: "passkey", reason } })
        ),
        Effect.zipRight(Effect.fail(new AuthenticationError()))
      )

    /**
     * Registration options for the caller, its own passkeys excluded; the challenge kept for the
     * caller only. A passkey is a new way in: the caller's sign-in must be recent (domain/WaysIn.ts).
     */
    const registerBegin = Effect.fn("Passkeys.registerBegin")(function* (principal: Principal) {
      const user = principal.user
      yield* waysIn.requireRecentSignIn(principal)
      const exclude = yield* passkeys.credentialsOf(user.id)
      const options = yield* webauthn.registrationOptions(
        { id: user.id, name: user.email, displayName: user.email },
        exclude
      )
      const challenge_key = yield* keyFor(REGISTRATION_CHALLENGE_PREFIX)
      yield* challenges.put(
        challenge_key,
        encodeRegistrationChallenge({ challenge: options.challenge, user_id: user.id }),
        ttl
      )
      return { ...options, challenge_key }
    })

    /**
     * Verifies the attestation against the caller's challenge (taken once), then stores the
     * passkey as a change of the caller's ways in: only if they are still as the request found
     * them (a session ended meanwhile by a takeover or a reset plants nothing), and the sign-in
     * must still be recent.
     */
    const registerComplete = Effect.fn("Passkeys.registerComplete")(function* (
      principal: Principal,
      request: {
        readonly challenge_key: string
        readonly credential: RegistrationCredential
        readonly device_name: string
      }
    ) {
      const user = principal.user
      yield* waysIn.requireRecentSignIn(principal)
      const stored = Option.flatMap(yield* challenges.take(request.challenge_key), decodeRegistrationChallenge)
      if (Option.isNone(stored)) return yield* registrationRefused("unknown, expired or spent challenge")
      if (stored.value.user_id !== user.id)
        return yield* registrationRefused("the challenge was issued to another user")
      const registered = yield* webauthn
        .verifyRegistration(request.credential, stored.value.challenge)
        .pipe(Effect.catchTag("WebAuthnVerificationError", (error) => registrationRefused(error.reason)))
      const passkey = new Passkey({
        id: PasskeyId.make(yield* crypto.randomId),
        user_id: user.id,
        ...registered,
        device_name: request.device_name,
        created_at: yield* DateTime.now,
        last_used_at: Option.none()
      })
      yield* waysIn
        .change(
          user,
          WayInChange.PasskeyAdded({ passkey_id: passkey.id, device_name: passkey.device_name }),
          passkeys.add(passkey),
          {
            actor: Actor.user(user.id),
            details: { passkey_id: passkey.id, device_name: passkey.device_name },
            expectedVersion: user.credential_version
          }
        )
        .pipe(
          Effect.catchTags({
            PasskeyCredentialTakenError: () => registrationRefused("the credential is registered already"),
            CredentialsChangedError: () => registrationRefused("the account's ways in changed meanwhile")
          })
        )
      return toPasskeyInfo(passkey)
    })

    /**
     * Sign-in options. With an email, `allowCredentials` is always there: the user's credentials,
     * or none for an unknown address, looked up the same way, so the two cannot be told apart.
     * Without one, the browser offers the discoverable credentials it holds for the RP.
     */
    const authenticateBegin = Effect.fn("Passkeys.authenticateBegin")(function* (email: Option.Option<string>) {
      const allow = yield* Option.match(email, {
        onNone: () => Effect.succeedNone,
        onSome: (address) =>
          users.findByLogin("email", normaliseEmail(address)).pipe(
            Effect.flatMap((user) =>
              passkeys.credentialsOf(Option.match(user, { onNone: () => NOBODY, onSome: (u) => u.id }))
            ),
            Effect.asSome
          )
      })
      const options = yield* webauthn.authenticationOptions(allow)
      const challenge_key = yield* keyFor(AUTHENTICATION_CHALLENGE_PREFIX)
      yield* challenges.put(challenge_key, options.challenge, ttl)
      return { ...options, challenge_key }
    })

    /**
     * The passkey the assertion names, verified against the challenge, then the sign-count rule:
     * a counter that moved forward is advanced by compare-and-swap, so that of assertions racing
     * with one counter value at most one signs in; one that did not is a suspected clone.
     */
    const verifiedOwner = Effect.fnUntraced(function* (challenge: string, credential: AuthenticationCredential) {
      const credentialId = Schema.decodeUnknownOption(CredentialId)(credential.rawId)
      const found = Option.isSome(credentialId)
        ? yield* passkeys.findByCredentialId(credentialId.value)
        : Option.none<{ readonly passkey: Passkey; readonly user: User }>()
      if (Option.isNone(found)) return yield* signInRefused("unknown credential")
      const { passkey, user } = found.value
      const assertion = yield* webauthn
        .verifyAuthentication(credential, challenge, passkey)
        .pipe(Effect.catchTag("WebAuthnVerificationError", (error) => signInRefused(error.reason, user.id)))
      if (!user.is_active) return yield* signInRefused("inactive user", user.id)
      const now = yield* DateTime.now
      const decision = decideSignCount(passkey.sign_count, assertion.sign_count)
      switch (decision._tag) {
        case "CounterNotUsed":
          yield* passkeys.touch(passkey.id, now)
          break
        case "Advance":
          if (!(yield* passkeys.advanceSignCount(passkey.id, decision.expected, decision.reported, now))) {
            return yield* cloneSuspected(passkey, assertion.sign_count)
          }
          break
        case "SuspectedClone":
          return yield* cloneSuspected(passkey, assertion.sign_count)
      }
      return { user, passkey }
    })

    const cloneSuspected = (passkey: Passkey, reported: number) =>
      Effect.logWarning("passkey sign count did not advance: a cloned authenticator is suspected").pipe(
        Effect.annotateLogs({ passkey_id: passkey.id, user_id: passkey.user_id, reported_sign_count: reported }),
        Effect.zipRight(
          audit.record({
            type: "sign_in.failed",
            user_id: passkey.user_id,
            details: { method: "passkey", reason: "suspected clone", passkey_id: passkey.id }
          })
        ),
        Effect.zipRight(Effect.fail(new AuthenticationError()))
      )

    /** Sign-in with a passkey: its challenge taken once, the assertion verified, then a session as any sign-in. */
    const authenticateComplete = Effect.fn("Passkeys.authenticateComplete")(function* (
      request: { readonly challenge_key: string; readonly credential: AuthenticationCredential },
      client: ClientInfo
    ) {
      const challenge = yield* challenges.take(request.challenge_key)
      if (Option.isNone(challenge)) return yield* signInRefused("unknown, expired or spent challenge")
      const { user, passkey } = yield* verifiedOwner(challenge.value, request.credential)
      // A user deleted or whose ways in changed since the check signs nobody in: the same answer
      // as any failed sign-in.
      const signedIn = AuthEvent.after_login({ user: toPublicUser(user) })
      const pair = yield* sessions.start(user, client, { method: "passkey", passkey_id: passkey.id }, signedIn).pipe(
        Effect.catchTags({
          UserNotFoundError: () => Effect.fail(new AuthenticationError()),
          CredentialsChangedError: () => Effect.fail(new AuthenticationError())
        })
      )
      yield* events.emit(signedIn)
      return { ...pair, user: toPublicUser(user) } satisfies LoginResponse
    }, countedSignIn("passkey"))

    /** The caller's passkeys as listed, oldest first: never a key or a counter. */
    const list = Effect.fn("Passkeys.list")(function* (principal: Principal) {
      return (yield* passkeys.listOf(principal.user.id)).map(toPasskeyInfo)
    })

    /** Deletes one of the caller's passkeys, unless it is the last way to sign in (spec rule 6). */
    const remove = Effect.fn("Passkeys.delete")(function* (principal: Principal, passkeyId: string) {
      const user = principal.user
      const parsed = Schema.decodeUnknownOption(PasskeyId)(passkeyId)
      if (Option.isNone(parsed)) return yield* new PasskeyNotFoundError()
      const id = parsed.value
      // Its name, for the owner's notice; whether it is the caller's is decided with the removal.
      const named = (yield* passkeys.listOf(user.id)).find((passkey) => passkey.id === id)
      yield* waysIn.remove(
        principal,
        Removal.Passkey({ id }),
        WayInChange.PasskeyRemoved({ passkey_id: id, device_name: named?.device_name ?? "" }),
        passkeys.deleteOfUser(user.id, id),
        () => new PasskeyNotFoundError(),
        { passkey_id: id }
      )
    })

    return { registerBegin, registerComplete, authenticateBegin, authenticateComplete, list, delete: remove } as const
  })
}) {}
