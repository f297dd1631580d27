import { DateTime, Duration, Effect, Either, Option } from "effect"
import { Actor } from "../domain/Audit.js"
import {
  CODE_DIGITS,
  ConfirmDecision,
  decideConfirmation,
  decideRequest,
  type EmailSignInRequest,
  MAX_CODE_ATTEMPTS
} from "../domain/EmailSignIn.js"
import { AuthEvent } from "../domain/Events.js"
import { AuthenticationError, SignInCodeError, TokenError, ValidationError } from "../domain/errors.js"
import { registrationFieldValues } from "../domain/Profile.js"
import type { ClientInfo } from "../domain/Session.js"
import type { LoginResponse } from "../domain/Token.js"
import { type Email, normaliseLogin, toPublicUser, type User } from "../domain/User.js"
import { Audit } from "./Audit.js"
import { AuthPolicy } from "./AuthPolicy.js"
import { EvenAnswers } from "./EvenAnswers.js"
import { Lockout } from "./Lockout.js"
import { countedSignIn } from "./metrics.js"
import { Cryptography } from "./ports/Cryptography.js"
import { EmailSignInRequests } from "./ports/EmailSignInRequests.js"
import { Events } from "./ports/Events.js"
import { UserRepo } from "./ports/UserRepo.js"
import { Sessions } from "./Sessions.js"
import { WaysIn } from "./WaysIn.js"
import { Webhooks } from "./Webhooks.js"

/**
 * When a request or a refused code is answered, known address or not: above what its work takes
 * on an idle machine (a lookup, a write, a mail handed on), and the answer never waits for more
 * (EvenAnswers).
 */
export const SIGN_IN_ANSWER_FLOOR = Duration.millis(20)

/** How a taken request was confirmed: by its link or by its code. */
type Confirmation = "email_link" | "email_code"

const invalidLink = new TokenError({ message: "The sign-in link is invalid, expired or already used." })

/**
 * Sign-in by a mailed link or code (docs/behaviour.md, "Sign-in by mail"), and
 * passkey-first sign-up when EMAIL_SIGN_UP_ENABLED: an account created by it is verified and
 * has no password; its owner adds a passkey within REAUTH_MAX_AGE_SECONDS of this sign-in.
 */
export class EmailSignIn extends Effect.Service<EmailSignIn>()("app/EmailSignIn", {
  effect: Effect.gen(function* () {
    const users = yield* UserRepo
    const requests = yield* EmailSignInRequests
    const sessions = yield* Sessions
    const waysIn = yield* WaysIn
    const lockout = yield* Lockout
    const events = yield* Events
    const webhooks = yield* Webhooks
    const audit = yield* Audit
    const crypto = yield* Cryptography
    const policy = yield* AuthPolicy
    const even = yield* EvenAnswers
    const signUpEnabled = policy.accounts.emailSignUpEnabled

    /** The code's stored form: keyed, and bound to its address, so no table of six digits reverses it. */
    const codeDigest = (email: string, code: string) => crypto.mac("email-sign-in-code", `${email}\n${code}`)

    /** The registration fields a request carries, in their stored form; none but with sign-up on. */
    const acceptedFields = (extra: Readonly<Record<string, unknown>>) => {
      if (!signUpEnabled) {
        const names = Object.keys(extra)
        return names.length === 0
          ? Either.right({})
          : Either.left(names.map((path) => ({ path, message: "is not accepted: sign-up by mail is off" })))
      }
      return registrationFieldValues(policy.profile, extra)
    }

    /** Stores a new request for the address (voiding any earlier one) and mails its link and code. */
    const mail = Effect.fnUntraced(function* (
      email: string,
      fields: Record<string, unknown>,
      user: Option.Option<User>,
      authorizationRequest: string | undefined
    ) {
      const token = yield* crypto.randomSecret
      const code = yield* crypto.randomDigits(CODE_DIGITS)
      const now = yield* DateTime.now
      const mail = AuthEvent.send_sign_in_email({
        email,
        token,
        code,
        sign_up: Option.isNone(user),
        ...(authorizationRequest === undefined ? {} : { authorization_request: authorizationRequest })
      })
      const stored = requests.replace({
        email,
        token_digest: crypto.digest(token),
        code_digest: codeDigest(email, code),
        fields,
        attempts: 0,
        created_at: now,
        expires_at: DateTime.addDuration(now, Duration.minutes(policy.tokens.emailSignInExpireMinutes))
      })
      yield* webhooks.committedWith("send_sign_in_email", stored, () => mail)
      yield* audit.record({
        type: "email_sign_in.requested",
        user_id: Option.getOrNull(Option.map(user, (found) => found.id)),
        details: { sign_up: Option.isNone(user) }
      })
      yield* events.emit(mail)
    })

    /**
     * Mails a link and a code when the address belongs to an active user, or, with sign-up on,
     * to no user; answers nothing either way, at SIGN_IN_ANSWER_FLOOR. The fields are checked
     * whatever the address (their problems are the request's, never the address's). Asked from
     * the OpenID Provider's sign-in page, the link resumes `authorizationRequest`.
     */
    const request = Effect.fn("EmailSignIn.request")(function* (
      email: Email,
      extra: Readonly<Record<string, unknown>> = {},
      authorizationRequest?: string
    ) {
      const fields = acceptedFields(extra)
      if (Either.isLeft(fields)) {
        return yield* new ValidationError({
          message: "The registration fields are not acceptable.",
          errors: fields.left
        })
      }
      const address = normaliseLogin("email", email)
      yield* even.atFloor(
        SIGN_IN_ANSWER_FLOOR,
        Effect.map(users.findByLogin("email", address), (found) => {
          const decision = decideRequest(found, signUpEnabled)
          if (decision._tag === "SignIn") return mail(address, {}, Option.some(decision.user), authorizationRequest)
          if (decision._tag === "SignUp") return mail(address, fields.right, Option.none(), authorizationRequest)
          return Effect.void
        })
      )
    })

    /** The account created by a confirmed sign-up: verified, without a password. */
    const signUp = (request: EmailSignInRequest) =>
      Effect.gen(function* () {
        const created = yield* webhooks.committedWith(
          "after_register",
          users.create({
            email: request.email as Email,
            hashed_password: Option.none(),
            is_active: true,
            is_verified: true,
            is_superuser: false,
            fields: request.fields
          }),
          (user) => AuthEvent.after_register({ user: toPublicUser(user) })
        )
        yield* audit.record({
          type: "user.created",
          user_id: created.id,
          actor: Actor.user(created.id),
          details: { method: "email_sign_in" }
        })
        yield* events.emit(AuthEvent.after_register({ user: toPublicUser(created) }))
        return created
      })

    /** The account a taken request signs in, as its decision says; refused as the link or code would be. */
    const accountOf = (request: EmailSignInRequest, refused: TokenError | SignInCodeError) =>
      Effect.gen(function* () {
        const decision = decideConfirmation(yield* users.findByLogin("email", request.email), signUpEnabled)
        if (decision._tag === "Refused") return yield* Effect.fail(refused)
        if (ConfirmDecision.$is("SignIn")(decision)) return decision.user
        // A registration of the address that won the race is reached by the proof like any other account.
        return yield* signUp(request).pipe(
          Effect.catchTag("UserAlreadyExistsError", () =>
            Effect.flatMap(users.findByLogin("email", request.email), (found) =>
              Option.isSome(found) && found.value.is_active ? Effect.succeed(found.value) : Effect.fail(refused)
            )
          )
        )
      })

    /**
     * A taken request's sign-in: the mail proved the address, so an account that never proved it
     * is taken over first (domain/WaysIn.ts); then a session starts on the account as it now is.
     */
    const complete = Effect.fnUntraced(function* (
      request: EmailSignInRequest,
      client: ClientInfo,
      how: Confirmation,
      refused: TokenError | SignInCodeError
    ) {
      const account = yield* accountOf(request, refused)
      const { user } = yield* waysIn.confirmAddress(account, "mailed_sign_in")
      const signedIn = AuthEvent.after_login({ user: toPublicUser(user) })
      const pair = yield* sessions.start(user, client, { method: how }, signedIn)
      yield* events.emit(signedIn)
      return { ...pair, user: toPublicUser(user) } satisfies LoginResponse
    })

    /** A failed sign-in as every one answers: the account changed or went while this one ran. */
    const asFailedSignIn = <A, E, R>(self: Effect.Effect<A, E, R>) =>
      Effect.catchTags(self, {
        UserNotFoundError: () => Effect.fail(new AuthenticationError()),
        CredentialsChangedError: () => Effect.fail(new AuthenticationError())
      })

    /** Signs in by the mailed link's token: single use, of the address's latest request only. */
    const confirmLink = Effect.fn("EmailSignIn.confirmLink")(function* (token: string, client: ClientInfo) {
      const taken = yield* requests.takeByToken(crypto.digest(token), yield* DateTime.now)
      if (Option.isNone(taken)) return yield* invalidLink
      return yield* asFailedSignIn(complete(taken.value, client, "email_link", invalidLink))
    }, countedSignIn("email"))

    /** A refused code counted against the address's request, if it has one, and audited so. */
    const countWrongCode = (address: string, now: DateTime.Utc) =>
      Effect.flatMap(requests.countWrongCode(address, now, MAX_CODE_ATTEMPTS), (counted) =>
        counted._tag === "NoRequest"
          ? Effect.void
          : audit.record({
              type: counted._tag === "Voided" ? "email_sign_in.voided" : "email_sign_in.code_failed",
              user_id: null,
              details: counted._tag === "Counted" ? { attempts_left: counted.attemptsLeft } : {}
            })
      )

    /**
     * Signs in by the mailed code. Wrong codes count toward the address's lockout with wrong
     * passwords (in line, known address or not), and the fifth voids the request; every refusal is
     * the same 400 at SIGN_IN_ANSWER_FLOOR, pending request or not: in line each is one take that
     * changes nothing, and the count of a wrong code runs after the answer (EvenAnswers). So a
     * right code racing wrong ones may be taken before their counts land; the lockout and the
     * confirm route's rate limit bound such a burst.
     */
    const confirmCode = Effect.fn("EmailSignIn.confirmCode")(function* (
      email: Email,
      code: string,
      client: ClientInfo
    ) {
      const address = normaliseLogin("email", email)
      const refused = new SignInCodeError()
      const taken = yield* lockout.guard(
        address,
        even.refusedAtFloor(
          SIGN_IN_ANSWER_FLOOR,
          Effect.gen(function* () {
            const now = yield* DateTime.now
            const found = yield* requests.takeByCode(address, codeDigest(address, code), now, MAX_CODE_ATTEMPTS)
            return Option.isSome(found)
              ? Either.right(found.value)
              : Either.left({ error: refused, work: countWrongCode(address, now) })
          })
        )
      )
      return yield* asFailedSignIn(complete(taken, client, "email_code", refused))
    }, countedSignIn("email"))

    return { request, confirmLink, confirmCode } as const
  })
}) {}
