import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema, OpenApi } from "@effect/platform"
import { Effect, type Redacted, Schema } from "effect"
import { Accounts, Registration } from "../../../application/Accounts.js"
import { PasswordSignIn } from "../../../application/PasswordSignIn.js"
import { Sessions } from "../../../application/Sessions.js"
import { type Deployment, profileRules } from "../../../config/Deployment.js"
import {
  AccountLockedError,
  AuthenticationError,
  InvalidPasswordError,
  UserAlreadyExistsError
} from "../../../domain/errors.js"
import { hasControlCharacter } from "../../../domain/Text.js"
import { LoginResponse, TokenPair } from "../../../domain/Token.js"
import { Email, PublicUser } from "../../../domain/User.js"
import { featureApi, Message, PasswordField, strict } from "../Api.js"
import { Authentication, CurrentPrincipal } from "../Authentication.js"
import { clientInfo } from "../clientInfo.js"
import { CsrfError, SessionTransport } from "../cookies.js"
import { feature } from "../Feature.js"
import { declared, TokenFailure } from "../problems.js"

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

const RefreshRequest = strict({ refresh_token: Schema.String }).annotations({ identifier: "RefreshRequest" })

/** Cookie mode: the refresh token may travel in the cookie, so the body may be `{}` or absent (null). */
const CookieRefreshRequest = Schema.NullOr(
  strict({ refresh_token: Schema.optional(Schema.String) }).annotations({ identifier: "CookieRefreshRequest" })
)

/**
 * The refresh body of the deployment's transport: the bearer schema only narrows the cookie
 * mode's (a required token), so one handler serves both.
 */
const refreshPayload = (tokenTransport: "bearer" | "cookie") =>
  tokenTransport === "cookie" ? CookieRefreshRequest : RefreshRequest

/** The registration body: email, password and the deployment's registration fields. */
export interface RegisterRequest {
  readonly email: Email
  readonly password: Redacted.Redacted<string>
  readonly [field: string]: unknown
}

/**
 * The register body is built from the deployment at start-up, like the login body from
 * LOGIN_FIELD, so OpenAPI documents its extra fields; anything else is still refused.
 */
const registerPayload = (loginField: string, deployment: Deployment) => {
  const rules = profileRules(loginField, deployment)
  const extra: Record<string, Schema.Schema.All | Schema.PropertySignature.All> = {}
  for (const name of rules.registrationFields ?? []) {
    const schema = rules.schemas?.get(name)
    if (schema === undefined) continue
    extra[name] = rules.requiredFields?.has(name) ? schema : Schema.optionalWith(schema, { exact: true })
  }
  return strict({ ...extra, email: Email, password: PasswordField }).annotations({
    identifier: "RegisterRequest"
  }) as unknown as Schema.Schema<RegisterRequest, { readonly email: string; readonly password: string }>
}

const accepted = { detail: "If the address can be registered, the account has been created." }

/** Registration, password sign-in, token refresh and sign-out. Always served. */
export const auth = feature({
  name: "auth",
  required: "registration and sign-in",
  limits: [
    { bucket: "login", path: "/login", hashes: true },
    { bucket: "register", path: "/register", hashes: true },
    { bucket: "refresh", path: "/refresh" }
  ],
  api: ({ settings, deployment }) =>
    featureApi(
      {
        prefix: settings.server.authPrefix,
        title: "Auth",
        description: "Registration, password sign-in, token refresh and sign-out."
      },
      HttpApiGroup.make("auth")
        .add(
          HttpApiEndpoint.post("register", "/register")
            .setPayload(registerPayload(settings.accounts.loginField, deployment))
            .addSuccess(PublicUser, { status: 201 })
            .addSuccess(Message, { status: 202 })
            .addError(Schema.Union(declared(InvalidPasswordError), declared(UserAlreadyExistsError)))
        )
        .add(
          HttpApiEndpoint.post("login", "/login")
            .setPayload(loginPayload(settings.accounts.loginField))
            .addSuccess(LoginResponse)
            .addError(Schema.Union(declared(AuthenticationError), declared(AccountLockedError)))
        )
        .add(
          HttpApiEndpoint.post("refresh", "/refresh")
            .setPayload(refreshPayload(settings.cookies.tokenTransport))
            .addSuccess(TokenPair)
            .addError(Schema.Union(TokenFailure, declared(CsrfError)))
            .annotate(
              OpenApi.Description,
              settings.cookies.tokenTransport === "cookie"
                ? "Rotates the refresh token of the portcullis_refresh cookie (which wins over a body token); the X-CSRF-Token header must echo the portcullis_csrf cookie, else 403 CsrfError. Both cookies are renewed and refresh_token is null."
                : "Rotates the refresh token given in the body."
            )
        )
        .add(HttpApiEndpoint.post("logout", "/logout").addSuccess(HttpApiSchema.NoContent).middleware(Authentication)),
      (handlers) =>
        Effect.gen(function* () {
          const accounts = yield* Accounts
          const signIn = yield* PasswordSignIn
          const sessions = yield* Sessions
          const transport = yield* SessionTransport
          return handlers
            .handle("register", ({ payload: { email, password, ...extra } }) =>
              accounts
                .register(email, password, extra)
                .pipe(Effect.map(Registration.$match({ Accepted: () => accepted, Created: ({ user }) => user })))
            )
            .handle("login", ({ payload, request }) =>
              signIn
                .login(payload.identifier, payload.password, clientInfo(request))
                .pipe(Effect.flatMap(transport.deliver))
            )
            .handle("refresh", ({ payload, request }) =>
              transport.refresh(request, payload?.refresh_token, (token) =>
                sessions.refresh(token, clientInfo(request))
              )
            )
            .handle("logout", () =>
              Effect.flatMap(CurrentPrincipal, sessions.logout).pipe(Effect.zipRight(transport.clear))
            )
        })
    )
})
