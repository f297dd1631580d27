import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema } from "@effect/platform"
import { Effect, Option, Schema } from "effect"
import { Accounts } from "../../../application/Accounts.js"
import { type Deployment, profileRules } from "../../../config/Deployment.js"
import {
  AccountLockedError,
  InvalidPasswordError,
  RateLimitedError,
  ReauthenticationError,
  UserAlreadyExistsError
} from "../../../domain/errors.js"
import { PublicUser, toPublicUser } from "../../../domain/User.js"
import { RequireVerified } from "../AccessLevels.js"
import { featureApi, Message, PasswordField, strict } from "../Api.js"
import { Authentication, CurrentPrincipal } from "../Authentication.js"
import { feature } from "../Feature.js"
import { declared } from "../problems.js"

/**
 * The PATCH /me body: the deployment's editable fields, each checked by its schema (a bad value
 * is a 422 naming it), documented in OpenAPI. Other names pass to the use case, which refuses
 * protected and unknown fields by name.
 */
const profilePatchPayload = (loginField: string, deployment: Deployment) => {
  const rules = profileRules(loginField, deployment)
  const editable: Record<string, Schema.PropertySignature.All> = {}
  for (const name of rules.editableFields) {
    const schema = rules.schemas?.get(name)
    if (schema !== undefined) editable[name] = Schema.optionalWith(schema, { exact: true })
  }
  return Schema.Struct(editable, Schema.Record({ key: Schema.String, value: Schema.Unknown })).annotations({
    identifier: "ProfilePatch",
    description: "The deployment's custom profile fields to change. Protected and unknown fields are refused."
  }) as unknown as Schema.Schema<Readonly<Record<string, unknown>>, Readonly<Record<string, unknown>>>
}

/** The signed-in user's own account. */
export const profile = feature({
  name: "profile",
  limits: [],
  api: ({ settings, deployment }) =>
    featureApi(
      { prefix: settings.server.authPrefix, title: "Profile", description: "The signed-in user's own account." },
      HttpApiGroup.make("profile")
        .add(HttpApiEndpoint.get("me", "/me").addSuccess(PublicUser))
        .add(HttpApiEndpoint.get("verifiedMe", "/me/verified").addSuccess(PublicUser).middleware(RequireVerified))
        .add(
          HttpApiEndpoint.patch("updateMe", "/me")
            .setPayload(profilePatchPayload(settings.accounts.loginField, deployment))
            .addSuccess(PublicUser)
            .addError(declared(UserAlreadyExistsError))
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
            .addError(
              Schema.Union(
                declared(ReauthenticationError),
                declared(InvalidPasswordError),
                declared(AccountLockedError),
                declared(RateLimitedError)
              )
            )
        )
        .middleware(Authentication),
      (handlers) =>
        Effect.gen(function* () {
          const accounts = yield* Accounts
          return handlers
            .handle("me", () => Effect.map(CurrentPrincipal, (principal) => toPublicUser(principal.user)))
            .handle("verifiedMe", () => Effect.map(CurrentPrincipal, (principal) => toPublicUser(principal.user)))
            .handle("updateMe", ({ payload }) =>
              Effect.flatMap(CurrentPrincipal, (principal) => accounts.updateProfile(principal, payload))
            )
            .handle("deleteMe", () => Effect.flatMap(CurrentPrincipal, accounts.deleteAccount))
            .handle("changePassword", ({ payload }) =>
              Effect.flatMap(CurrentPrincipal, (principal) =>
                accounts.changePassword(principal, Option.fromNullable(payload.current_password), payload.new_password)
              ).pipe(Effect.as({ detail: "The password has been changed; your other sessions have ended." }))
            )
        })
    )
})
