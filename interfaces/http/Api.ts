import { HttpApi, HttpApiEndpoint, HttpApiGroup, HttpApiSchema, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import { StoreUnavailableError } from "../../application/ports/StoreUnavailableError.js"
import {
  AuthenticationError,
  AuthorizationError,
  InvalidPasswordError,
  ReauthenticationError,
  TokenBlacklistedError,
  TokenError,
  TokenExpiredError,
  UserAlreadyExistsError,
  ValidationError
} from "../../domain/errors.js"
import { LoginResponse, TokenPair } from "../../domain/Token.js"
import { Email, PublicUser } from "../../domain/User.js"
import { Authentication } from "./Authentication.js"
import { CsrfError } from "./cookies.js"
import { documentValidationProblems } from "./openapi.js"
import { declared } from "./problems.js"

/** A request body that refuses fields it does not declare. */
const strict = <Fields extends Schema.Struct.Fields>(fields: Fields) =>
  Schema.Struct(fields).annotations({ parseOptions: { onExcessProperty: "error" } })

/** Passwords on the wire: redacted at once; the policy judges them, this only bounds them. */
const PasswordField = Schema.Redacted(Schema.String.pipe(Schema.maxLength(4096)))

export const Message = Schema.Struct({ detail: Schema.String }).annotations({ identifier: "Message" })
export type Message = typeof Message.Type

export const Credentials = Schema.Struct({ identifier: Schema.String, password: PasswordField })

/**
 * The login body names its identifier after LOGIN_FIELD (`email` by default), so its schema is
 * built from the setting; use cases only ever see `identifier`.
 */
const loginPayload = (loginField: string) => {
  const fields: Record<string, Schema.Schema<string>> = {
    [loginField]: Schema.String.pipe(Schema.minLength(1), Schema.maxLength(320)),
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

const RefreshRequest = strict({ refresh_token: Schema.String }).annotations({ identifier: "RefreshRequest" })

/** Cookie mode: the refresh token may travel in the cookie, so the body may be `{}` or absent (null). */
const CookieRefreshRequest = Schema.NullOr(
  strict({ refresh_token: Schema.optional(Schema.String) }).annotations({ identifier: "CookieRefreshRequest" })
)

/**
 * The refresh body of the deployment's transport. Both share the cookie mode's type, which the
 * bearer schema only narrows (a required token), so the handler is the same for both.
 */
const refreshPayload = (tokenTransport: "bearer" | "cookie") =>
  (tokenTransport === "cookie" ? CookieRefreshRequest : RefreshRequest) as typeof CookieRefreshRequest

const authGroup = (loginField: string, tokenTransport: "bearer" | "cookie" = "bearer") =>
  HttpApiGroup.make("auth")
    .add(
      HttpApiEndpoint.post("register", "/register")
        .setPayload(strict({ email: Email, password: PasswordField }).annotations({ identifier: "RegisterRequest" }))
        .addSuccess(PublicUser, { status: 201 })
        .addSuccess(Message, { status: 202 })
        .addError(declared(InvalidPasswordError))
        .addError(declared(UserAlreadyExistsError))
    )
    .add(
      HttpApiEndpoint.post("login", "/login")
        .setPayload(loginPayload(loginField))
        .addSuccess(LoginResponse)
        .addError(declared(AuthenticationError))
    )
    .add(
      HttpApiEndpoint.post("refresh", "/refresh")
        .setPayload(refreshPayload(tokenTransport))
        .addSuccess(TokenPair)
        .addError(declared(TokenError))
        .addError(declared(TokenExpiredError))
        .addError(declared(TokenBlacklistedError))
        .addError(declared(CsrfError))
        .annotate(
          OpenApi.Description,
          tokenTransport === "cookie"
            ? "Rotates the refresh token of the portcullis_refresh cookie (which wins over a body token); the X-CSRF-Token header must echo the portcullis_csrf cookie, else 403 CsrfError. Both cookies are renewed and refresh_token is null."
            : "Rotates the refresh token given in the body."
        )
    )
    .add(HttpApiEndpoint.post("logout", "/logout").addSuccess(HttpApiSchema.NoContent).middleware(Authentication))
    .annotate(OpenApi.Title, "Auth")
    .annotate(OpenApi.Description, "Registration, password sign-in, token refresh and sign-out.")

const profileGroup = HttpApiGroup.make("profile")
  .add(HttpApiEndpoint.get("me", "/me").addSuccess(PublicUser))
  .add(HttpApiEndpoint.get("verifiedMe", "/me/verified").addSuccess(PublicUser).addError(declared(AuthorizationError)))
  .add(
    HttpApiEndpoint.patch("updateMe", "/me")
      .setPayload(
        Schema.Record({ key: Schema.String, value: Schema.Unknown }).annotations({
          identifier: "ProfilePatch",
          description: "The deployment's custom profile fields to change. Protected and unknown fields are refused."
        })
      )
      .addSuccess(PublicUser)
  )
  .add(HttpApiEndpoint.del("deleteMe", "/me").addSuccess(HttpApiSchema.NoContent))
  .add(
    HttpApiEndpoint.post("changePassword", "/change-password")
      .setPayload(
        strict({ current_password: Schema.optional(PasswordField), new_password: PasswordField }).annotations({
          identifier: "ChangePasswordRequest"
        })
      )
      .addSuccess(Message)
      .addError(declared(ReauthenticationError))
      .addError(declared(InvalidPasswordError))
  )
  .middleware(Authentication)
  .annotate(OpenApi.Title, "Profile")
  .annotate(OpenApi.Description, "The signed-in user's own account.")

const healthGroup = HttpApiGroup.make("health")
  .add(HttpApiEndpoint.get("healthz", "/healthz").addSuccess(Schema.Struct({ status: Schema.Literal("ok") })))
  .annotate(OpenApi.Title, "Health")

export interface ApiOptions {
  readonly authPrefix: string
  readonly loginField: string
  /** Cookie mode changes the refresh body (optional token); bearer when absent. */
  readonly tokenTransport?: "bearer" | "cookie"
}

/**
 * The whole HTTP contract. Built from settings: the prefix the auth routes live under, the
 * login field and the token transport; /healthz stays at the root for load balancers.
 */
export const makeApi = (options: ApiOptions) => {
  const routes = HttpApi.make("portcullis").add(authGroup(options.loginField, options.tokenTransport)).add(profileGroup)
  return (options.authPrefix === "" ? routes : routes.prefix(options.authPrefix as HttpApiEndpoint.PathSegment))
    .add(healthGroup)
    .addError(declared(ValidationError))
    .addError(declared(StoreUnavailableError))
    .annotate(OpenApi.Title, "Portcullis")
    .annotate(OpenApi.Description, "Authentication and account service.")
    .annotate(OpenApi.Transform, documentValidationProblems)
}

export type PortcullisApi = ReturnType<typeof makeApi>
