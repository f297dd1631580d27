import * as HttpApiEndpoint from "@effect/platform/HttpApiEndpoint"
import * as HttpApiGroup from "@effect/platform/HttpApiGroup"
import * as HttpApiSchema from "@effect/platform/HttpApiSchema"
import * as OpenApi from "@effect/platform/OpenApi"
import { DateTime, Schema } from "effect"
import { NewEmail } from "../../../../domain/Address.js"
import {
  AccountLockedError,
  AuthenticationError,
  AuthorizationRequestGoneError,
  OAuthError,
  OAuthProviderError,
  OAuthProviderNotFoundError,
  SignInCodeError,
  StoreUnavailableError,
  TokenError,
  TokenExpiredError
} from "../../../../domain/errors.js"
import { AuthenticationChallengeKey } from "../../../../domain/Passkey.js"
import { AuthenticationCredential } from "../../../../domain/PasskeyCeremony.js"
import { Email } from "../../../../domain/User.js"
import { type ApiShape, hashing, limited, listOf, Message, placed, strict } from "../../Api.js"
import { CsrfError } from "../../errors.js"
import { declared } from "../../problemSchemas.js"
import { Authentication } from "../../security.js"

const RequestId = Schema.String.pipe(Schema.minLength(1), Schema.maxLength(256)).annotations({
  description: "The parked authorization request's id, from the page's `?request=`."
})

/** A passkey's assertion for the provider's browser session (its options from /passkeys/authenticate/begin). */
export const PasskeySignIn = strict({
  request: RequestId,
  challenge_key: AuthenticationChallengeKey,
  credential: AuthenticationCredential
})

/**
 * A social provider's return to the sign-in page (its redirect URI): the provider's name, its
 * code and state, and the binding /oauth/{provider}/authorize answered, as /oauth/{provider}/callback takes them.
 */
export const ProviderCallbackSignIn = strict({
  request: RequestId,
  provider: Schema.String.pipe(Schema.minLength(1), Schema.maxLength(64)),
  code: Schema.String.pipe(Schema.maxLength(2048)),
  state: Schema.String.pipe(Schema.maxLength(4096)),
  binding: Schema.String.pipe(Schema.maxLength(256))
})

/**
 * A sign-in for the provider's browser session: what a sign-in route takes (the login body, a
 * mailed link's `token`, `email` and `code`, or a passkey's assertion after
 * /passkeys/authenticate/begin) and the request it resumes. The login field is LOGIN_FIELD's, so
 * that body holds string fields by name, and no field the sign-ins do not take.
 */
const sessionPayload = (loginField: string) => {
  const taken = new Set(["request", "password", "token", "code", "email", loginField])
  const byCredentials = Schema.Struct(
    {
      request: RequestId,
      password: Schema.optional(Schema.String.pipe(Schema.maxLength(4096))),
      token: Schema.optional(Schema.String.pipe(Schema.maxLength(4096))),
      code: Schema.optional(Schema.String.pipe(Schema.maxLength(16))),
      email: Schema.optional(Email)
    },
    Schema.Record({ key: Schema.String, value: Schema.String.pipe(Schema.maxLength(320)) })
  ).pipe(
    Schema.filter((body) => Object.keys(body).every((name) => taken.has(name)), {
      message: () => `takes request, ${loginField} and password, token, or email and code`
    })
  )
  return Schema.Union(PasskeySignIn, ProviderCallbackSignIn, byCredentials).annotations({
    identifier: "ProviderSignIn"
  })
}

/** The body of POST /oauth2/session, as decoded. */
export type ProviderSignIn = Schema.Schema.Type<ReturnType<typeof sessionPayload>>

const Continue = Schema.Struct({
  continue: Schema.String.annotations({ description: "Where the browser goes next." })
}).annotations({
  identifier: "ProviderContinue",
  examples: [{ continue: "https://app.example.com/callback?code=…&state=…&iss=https%3A%2F%2Fauth.example.com" }]
})

/** A mailed link and code asked from the sign-in page: the address (as /email-sign-in/request takes it) and the request the link resumes. */
const mailRequest = (signUp: boolean) =>
  strict({ request: RequestId, email: signUp ? NewEmail : Email }).annotations({ identifier: "ProviderMailRequest" })

const ConsentAnswer = strict({ request: RequestId, approve: Schema.Boolean }).annotations({
  identifier: "ConsentAnswer"
})

export const AppView = Schema.Struct({
  client_id: Schema.String,
  name: Schema.String,
  scopes: Schema.Array(Schema.String),
  granted_at: Schema.DateTimeUtc,
  last_used_at: Schema.NullOr(Schema.DateTimeUtc)
}).annotations({
  identifier: "App",
  examples: [
    {
      client_id: "wiki",
      name: "Team wiki",
      scopes: ["openid", "email"],
      granted_at: DateTime.unsafeMake("2026-03-14T09:30:02.000Z"),
      last_used_at: null
    }
  ]
})

/**
 * The OpenID Provider's JSON routes: the browser session's sign-in and the consent answer (the
 * routes the hosted pages call, so a deployment can build its own), and the apps the signed-in
 * user let in. The protocol routes (authorize, token, userinfo…) answer in OAuth's shapes and are
 * served beside the API (protocol.ts).
 */
export const oidcGroup = (shape: ApiShape, signUp = false) =>
  placed(
    {
      prefix: shape.authPrefix,
      title: "OpenID Provider",
      description:
        "With OIDC_PROVIDER_ENABLED: the sign-in and consent routes behind the provider's pages, and the apps a user let in. The protocol routes are described by the discovery document."
    },
    HttpApiGroup.make("oidc")
      .addError(declared(StoreUnavailableError))
      .add(
        HttpApiEndpoint.post("session", "/oauth2/session")
          .annotate(OpenApi.Summary, "Sign in for an authorization request")
          .annotate(
            OpenApi.Description,
            "Takes what a sign-in route takes (the login body, `{token}`, `{email, code}`, `{challenge_key, credential}` after /passkeys/authenticate/begin, or `{provider, code, state, binding}` when a social provider returns to the sign-in page) and the parked `request`; sets the provider's browser session cookie and answers where the browser goes next."
          )
          .setPayload(sessionPayload(shape.loginField))
          .addSuccess(Continue)
          .addError(
            Schema.Union(
              declared(AuthenticationError),
              declared(AccountLockedError),
              declared(SignInCodeError),
              declared(TokenError),
              declared(TokenExpiredError),
              declared(AuthorizationRequestGoneError),
              declared(OAuthError),
              declared(OAuthProviderError),
              declared(OAuthProviderNotFoundError)
            )
          )
          .pipe(limited("login"), hashing)
      )
      .add(
        HttpApiEndpoint.post("mail", "/oauth2/email-sign-in")
          .annotate(OpenApi.Summary, "Mail a sign-in link and code for an authorization request")
          .annotate(
            OpenApi.Description,
            "With EMAIL_SIGN_IN_ENABLED (otherwise 422): as POST /email-sign-in/request, 202 whatever the address; the mailed link opens the sign-in page with the request and the token, so that the request resumes. The code is typed on the page as before."
          )
          .setPayload(mailRequest(signUp))
          .addSuccess(Message, { status: 202 })
          .addError(declared(AuthorizationRequestGoneError))
          .pipe(limited("email_sign_in"))
      )
      .add(
        HttpApiEndpoint.post("consent", "/oauth2/consent")
          .annotate(OpenApi.Summary, "Answer the consent of an authorization request")
          .annotate(
            OpenApi.Description,
            "Needs the provider's browser session and `X-CSRF-Token` equal to its `portcullis_op_csrf` cookie; answers the redirect to the app (with a code, or `access_denied`)."
          )
          .setPayload(ConsentAnswer)
          .addSuccess(Continue)
          .addError(
            Schema.Union(declared(AuthenticationError), declared(CsrfError), declared(AuthorizationRequestGoneError))
          )
      )
      .add(
        HttpApiEndpoint.get("apps", "/me/apps")
          .annotate(OpenApi.Summary, "List the apps you let in")
          .addSuccess(listOf(AppView))
          .middleware(Authentication)
      )
      .add(
        HttpApiEndpoint.del("withdraw", "/me/apps/:client_id")
          .annotate(OpenApi.Summary, "Withdraw an app's consent")
          .annotate(
            OpenApi.Description,
            "Ends every token of the app's grant; answers 204 whether or not the app held one."
          )
          .setPath(Schema.Struct({ client_id: Schema.String.pipe(Schema.maxLength(256)) }))
          .addSuccess(HttpApiSchema.NoContent)
          .middleware(Authentication)
      )
  )
