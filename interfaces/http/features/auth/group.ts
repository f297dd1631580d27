import * as HttpApiEndpoint from "@effect/platform/HttpApiEndpoint"
import * as HttpApiGroup from "@effect/platform/HttpApiGroup"
import * as HttpApiSchema from "@effect/platform/HttpApiSchema"
import * as OpenApi from "@effect/platform/OpenApi"
import { type Redacted, Schema } from "effect"
import { NewEmail } from "../../../../domain/Address.js"
import {
  AccountLockedError,
  AuthenticationError,
  InvalidPasswordError,
  StoreUnavailableError,
  UserAlreadyExistsError
} from "../../../../domain/errors.js"
import { hasControlCharacter } from "../../../../domain/Text.js"
import { LoginResponse, TokenPair } from "../../../../domain/Token.js"
import { type Email, PublicUser } from "../../../../domain/User.js"
import { type ApiShape, hashing, limited, Message, PasswordField, placed, runtimeBody, strict } from "../../Api.js"
import { CsrfError } from "../../errors.js"
import { declared, TokenFailure } from "../../problemSchemas.js"
import { Authentication } from "../../security.js"

export const Credentials = Schema.Struct({ identifier: Schema.String, password: PasswordField })

/**
 * The login body names its identifier after LOGIN_FIELD (`email` by default), so its schema is
 * built from the setting; use cases only ever see `identifier`.
 */
const loginPayload = (loginField: string) => {
  const fields: Record<string, Schema.Schema<string>> = {
    [loginField]: Schema.String.pipe(
      Schema.minLength(1),
      Schema.maxLength(320),
      Schema.filter((identifier) => !hasControlCharacter(identifier), {
        message: () => "must not contain control characters"
      })
    ),
    password: Schema.String.pipe(Schema.maxLength(4096))
  }
  const wire = Schema.Struct(fields).annotations({
    identifier: "LoginRequest",
    parseOptions: { onExcessProperty: "error" }
  })
  return Schema.transform(wire, Credentials, {
    strict: false,
    decode: (body) => ({ identifier: body[loginField] ?? "", password: body.password ?? "" }),
    encode: (credentials) => ({ [loginField]: credentials.identifier, password: credentials.password })
  })
}

/** Cookie mode: the refresh token may travel in the cookie, so the body may be `{}` or absent (null). */
const CookieRefreshRequest = Schema.NullOr(
  strict({ refresh_token: Schema.optional(Schema.String) }).annotations({ identifier: "CookieRefreshRequest" })
)

const RefreshRequest = strict({ refresh_token: Schema.String }).annotations({ identifier: "RefreshRequest" })

/**
 * The refresh body of the deployment's transport: the bearer schema only narrows the cookie
 * mode's (a required token), so one type and one handler serve both.
 */
const refreshPayload = (
  tokenTransport: ApiShape["tokenTransport"]
): typeof CookieRefreshRequest | typeof RefreshRequest =>
  tokenTransport === "cookie" ? CookieRefreshRequest : RefreshRequest

/** The registration body: email, password and the deployment's registration fields. */
export interface RegisterRequest {
  readonly email: Email
  readonly password: Redacted.Redacted<string>
  readonly [field: string]: unknown
}

/**
 * The register body is built from the deployment's fields at start-up, like the login body from
 * LOGIN_FIELD, so OpenAPI documents its extra fields; anything else is still refused. The address
 * enters here, so it must look like no other (NewEmail).
 */
const registerPayload = (fields: ApiShape["registrationFields"]) =>
  runtimeBody<RegisterRequest, { readonly email: string; readonly password: string }>(
    strict({ ...fields, email: NewEmail, password: PasswordField }).annotations({ identifier: "RegisterRequest" })
  )

const refreshDescription = {
  cookie:
    "Rotates the refresh token of the portcullis_refresh cookie (which wins over a body token); the X-CSRF-Token header must echo the portcullis_csrf cookie, else 403 CsrfError. Both cookies are renewed and refresh_token is null.",
  bearer: "Rotates the refresh token given in the body."
}

/** Registration, password sign-in, token refresh and sign-out. */
export const authGroup = (shape: ApiShape) =>
  placed(
    {
      prefix: shape.authPrefix,
      title: "Auth",
      description: "Registration, password sign-in, token refresh and sign-out."
    },
    HttpApiGroup.make("auth")
      .addError(declared(StoreUnavailableError))
      .add(
        HttpApiEndpoint.post("register", "/register")
          .annotate(OpenApi.Summary, "Register a user")
          .setPayload(registerPayload(shape.registrationFields))
          .addSuccess(PublicUser, { status: 201 })
          .addSuccess(Message, { status: 202 })
          .addError(Schema.Union(declared(InvalidPasswordError), declared(UserAlreadyExistsError)))
          .pipe(limited("register"), hashing)
      )
      .add(
        HttpApiEndpoint.post("login", "/login")
          .annotate(OpenApi.Summary, "Sign in with a password")
          .setPayload(loginPayload(shape.loginField))
          .addSuccess(LoginResponse)
          .addError(Schema.Union(declared(AuthenticationError), declared(AccountLockedError)))
          .pipe(limited("login"), hashing)
      )
      .add(
        HttpApiEndpoint.post("refresh", "/refresh")
          .annotate(OpenApi.Summary, "Rotate the refresh token")
          .setPayload(refreshPayload(shape.tokenTransport))
          .addSuccess(TokenPair)
          .addError(Schema.Union(TokenFailure, declared(CsrfError)))
          .annotate(OpenApi.Description, refreshDescription[shape.tokenTransport])
          .pipe(limited("refresh"))
      )
      .add(
        HttpApiEndpoint.post("logout", "/logout")
          .annotate(OpenApi.Summary, "Sign out")
          .addSuccess(HttpApiSchema.NoContent)
          .middleware(Authentication)
      )
  )
