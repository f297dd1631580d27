import * as HttpApiEndpoint from "@effect/platform/HttpApiEndpoint"
import * as HttpApiGroup from "@effect/platform/HttpApiGroup"
import * as HttpApiSchema from "@effect/platform/HttpApiSchema"
import * as OpenApi from "@effect/platform/OpenApi"
import { DateTime, Schema } from "effect"
import {
  CredentialsChangedError,
  LastSignInMethodError,
  LinkedAccountNotFoundError,
  OAuthAccountAlreadyLinkedError,
  OAuthError,
  OAuthProviderAlreadyLinkedError,
  OAuthProviderError,
  OAuthProviderNotFoundError,
  ReauthenticationRequiredError,
  StoreUnavailableError
} from "../../../../domain/errors.js"
import { LoginResponse } from "../../../../domain/Token.js"
import { type ApiShape, limited, listOf, placed, strict } from "../../Api.js"
import { declared } from "../../problemSchemas.js"
import { Authentication } from "../../security.js"

const ProviderPath = Schema.Struct({ provider: Schema.String })

const Providers = Schema.Struct({
  providers: Schema.Array(Schema.String).annotations({ description: "The configured providers' names." })
}).annotations({ identifier: "OAuthProviders", examples: [{ providers: ["google", "github"] }] })

const AuthorizeParams = Schema.Struct({
  redirect_uri: Schema.String.pipe(Schema.maxLength(2048)).annotations({
    description: "Where the provider sends the browser back; one of the provider's allowed redirect URIs."
  })
})

const AuthorizationStart = Schema.Struct({
  authorization_url: Schema.String,
  binding: Schema.String.annotations({
    description: "Keep it (never in a URL) and send it with the callback: the state is only good with it."
  })
}).annotations({
  identifier: "OAuthAuthorization",
  examples: [
    {
      authorization_url:
        "https://accounts.google.com/o/oauth2/v2/auth?response_type=code&client_id=1234-abc.apps.googleusercontent.com&redirect_uri=https%3A%2F%2Fapp.example.com%2Foauth%2Fcallback&scope=openid+email+profile&state=eyJhbGciOiJIUzI1NiIs…&code_challenge=…&code_challenge_method=S256",
      binding: "Q2hvb3NlIGEgcmFuZG9t…"
    }
  ]
})

const CallbackRequest = strict({
  code: Schema.String.pipe(Schema.maxLength(2048)),
  state: Schema.String.pipe(Schema.maxLength(4096)),
  binding: Schema.String.pipe(Schema.maxLength(256))
}).annotations({ identifier: "OAuthCallbackRequest" })

const LinkedIdentity = Schema.Struct({
  provider: Schema.String,
  provider_user_id: Schema.String,
  provider_email: Schema.NullOr(Schema.String)
}).annotations({
  identifier: "OAuthLinkedIdentity",
  examples: [{ provider: "github", provider_user_id: "583231", provider_email: "ada@example.com" }]
})

const LinkedAccountView = Schema.Struct({
  provider: Schema.String,
  provider_user_id: Schema.String,
  provider_email: Schema.NullOr(Schema.String).annotations({
    description: "As the provider gave it; for display only."
  }),
  created_at: Schema.DateTimeUtc
}).annotations({
  identifier: "OAuthLinkedAccount",
  examples: [
    {
      provider: "github",
      provider_user_id: "583231",
      provider_email: "ada@example.com",
      created_at: DateTime.unsafeMake("2025-03-14T09:30:02.000Z")
    }
  ]
})

const StateFailure = Schema.Union(declared(OAuthError), declared(OAuthProviderError))

/** Social sign-in and account linking through OAuth providers (spec: OAuth routes). */
export const oauthGroup = (shape: ApiShape) =>
  placed(
    { prefix: shape.authPrefix, title: "OAuth", description: "Social sign-in and account linking." },
    HttpApiGroup.make("oauth")
      .addError(declared(StoreUnavailableError))
      .add(
        HttpApiEndpoint.get("providers", "/oauth/providers")
          .annotate(OpenApi.Summary, "Configured OAuth providers")
          .addSuccess(Providers)
      )
      .add(
        HttpApiEndpoint.get("authorize", "/oauth/:provider/authorize")
          .annotate(OpenApi.Summary, "Start an OAuth sign-in")
          .setPath(ProviderPath)
          .setUrlParams(AuthorizeParams)
          .addSuccess(AuthorizationStart)
          .addError(Schema.Union(declared(OAuthError), declared(OAuthProviderNotFoundError)))
          .annotate(
            OpenApi.Description,
            "Starts a sign-in: send the browser to authorization_url and keep the binding for the callback."
          )
          .pipe(limited("oauth_authorize"))
      )
      .add(
        HttpApiEndpoint.post("callback", "/oauth/:provider/callback")
          .annotate(OpenApi.Summary, "Complete an OAuth sign-in")
          .setPath(ProviderPath)
          .setPayload(CallbackRequest)
          .addSuccess(LoginResponse)
          .addError(Schema.Union(StateFailure, declared(OAuthProviderNotFoundError)))
          .annotate(
            OpenApi.Description,
            "Completes a sign-in with the provider's code, the state and the binding; a new user is made verified, without a password."
          )
          .pipe(limited("oauth_callback"))
      )
      .add(
        HttpApiEndpoint.get("authorizeLink", "/oauth/:provider/link/authorize")
          .annotate(OpenApi.Summary, "Start linking a provider account")
          .setPath(ProviderPath)
          .setUrlParams(AuthorizeParams)
          .addSuccess(AuthorizationStart)
          .addError(
            Schema.Union(
              declared(OAuthError),
              declared(OAuthProviderNotFoundError),
              declared(ReauthenticationRequiredError)
            )
          )
          .middleware(Authentication)
          .pipe(limited("oauth_authorize"))
      )
      .add(
        HttpApiEndpoint.post("link", "/oauth/:provider/link/callback")
          .annotate(OpenApi.Summary, "Link a provider account")
          .setPath(ProviderPath)
          .setPayload(CallbackRequest)
          .addSuccess(LinkedIdentity)
          .addError(
            Schema.Union(
              StateFailure,
              declared(OAuthProviderNotFoundError),
              declared(OAuthAccountAlreadyLinkedError),
              declared(OAuthProviderAlreadyLinkedError),
              declared(ReauthenticationRequiredError),
              declared(CredentialsChangedError)
            )
          )
          .annotate(
            OpenApi.Description,
            "Links the provider account to the signed-in user; no session is made or changed."
          )
          .middleware(Authentication)
          .pipe(limited("oauth_callback"))
      )
      .add(
        HttpApiEndpoint.get("accounts", "/oauth/accounts")
          .annotate(OpenApi.Summary, "Linked provider accounts")
          .addSuccess(listOf(LinkedAccountView))
          .middleware(Authentication)
      )
      .add(
        HttpApiEndpoint.del("unlink", "/oauth/accounts/:provider")
          .annotate(OpenApi.Summary, "Unlink a provider account")
          .setPath(ProviderPath)
          .addSuccess(HttpApiSchema.NoContent)
          .addError(Schema.Union(declared(LinkedAccountNotFoundError), declared(LastSignInMethodError)))
          .middleware(Authentication)
      )
  )
