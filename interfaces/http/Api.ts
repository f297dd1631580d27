import { HttpApi, HttpApiEndpoint, HttpApiGroup, HttpApiSchema, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import { StoreUnavailableError } from "../../application/ports/StoreUnavailableError.js"
import {
  AccountLockedError,
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

const authGroup = (loginField: string) =>
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
        .addError(declared(AccountLockedError))
    )
    .add(
      HttpApiEndpoint.post("refresh", "/refresh")
        .setPayload(strict({ refresh_token: Schema.String }).annotations({ identifier: "RefreshRequest" }))
        .addSuccess(TokenPair)
        .addError(declared(TokenError))
        .addError(declared(TokenExpiredError))
        .addError(declared(TokenBlacklistedError))
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
}

/**
 * The whole HTTP contract. Built from two settings: the prefix the auth routes live under and
 * the login field; /healthz stays at the root for load balancers.
 */
export const makeApi = (options: ApiOptions) => {
  const routes = HttpApi.make("portcullis").add(authGroup(options.loginField)).add(profileGroup)
  return (options.authPrefix === "" ? routes : routes.prefix(options.authPrefix as HttpApiEndpoint.PathSegment))
    .add(healthGroup)
    .addError(declared(ValidationError))
    .addError(declared(StoreUnavailableError))
    .annotate(OpenApi.Title, "Portcullis")
    .annotate(OpenApi.Description, "Authentication and account service.")
    .annotate(OpenApi.Transform, documentValidationProblems)
}

export type PortcullisApi = ReturnType<typeof makeApi>
