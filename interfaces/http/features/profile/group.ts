import * as HttpApiEndpoint from "@effect/platform/HttpApiEndpoint"
import * as HttpApiGroup from "@effect/platform/HttpApiGroup"
import * as HttpApiSchema from "@effect/platform/HttpApiSchema"
import * as OpenApi from "@effect/platform/OpenApi"
import { Schema } from "effect"
import {
  AccountLockedError,
  CredentialsChangedError,
  InvalidPasswordError,
  RateLimitedError,
  ReauthenticationError,
  ReauthenticationRequiredError,
  StoreUnavailableError,
  UserAlreadyExistsError
} from "../../../../domain/errors.js"
import { Me } from "../../../../domain/User.js"
import { type ApiShape, Message, PasswordField, placed, runtimeBody, strict } from "../../Api.js"
import { declared } from "../../problemSchemas.js"
import { Authentication, RequireVerified } from "../../security.js"

/**
 * The PATCH /me body: the deployment's editable fields, each checked by its schema (a bad value
 * is a 422 naming it), documented in OpenAPI. Other names pass to the use case, which refuses
 * protected and unknown fields by name.
 */
const profilePatchPayload = (editable: ApiShape["editableFields"]) =>
  runtimeBody<Readonly<Record<string, unknown>>, Readonly<Record<string, unknown>>>(
    Schema.Struct(editable, Schema.Record({ key: Schema.String, value: Schema.Unknown })).annotations({
      identifier: "ProfilePatch",
      description: "The deployment's custom profile fields to change. Protected and unknown fields are refused."
    })
  )

/** The signed-in user's own account. */
export const profileGroup = (shape: ApiShape) =>
  placed(
    { prefix: shape.authPrefix, title: "Profile", description: "The signed-in user's own account." },
    HttpApiGroup.make("profile")
      .addError(declared(StoreUnavailableError))
      .add(HttpApiEndpoint.get("me", "/me").annotate(OpenApi.Summary, "The signed-in user").addSuccess(Me))
      .add(
        HttpApiEndpoint.get("verifiedMe", "/me/verified")
          .annotate(OpenApi.Summary, "The signed-in user, if verified")
          .addSuccess(Me)
          .middleware(RequireVerified)
      )
      .add(
        HttpApiEndpoint.patch("updateMe", "/me")
          .annotate(OpenApi.Summary, "Change profile fields")
          .setPayload(profilePatchPayload(shape.editableFields))
          .addSuccess(Me)
          .addError(declared(UserAlreadyExistsError))
      )
      .add(
        HttpApiEndpoint.del("deleteMe", "/me")
          .annotate(OpenApi.Summary, "Delete the account")
          .addSuccess(HttpApiSchema.NoContent)
      )
      .add(
        HttpApiEndpoint.post("changePassword", "/change-password")
          .annotate(OpenApi.Summary, "Change the password")
          .setPayload(
            strict({ current_password: Schema.optional(PasswordField), new_password: PasswordField }).annotations({
              identifier: "ChangePasswordRequest"
            })
          )
          .addSuccess(Message)
          .addError(
            Schema.Union(
              declared(ReauthenticationError),
              declared(ReauthenticationRequiredError),
              declared(CredentialsChangedError),
              declared(InvalidPasswordError),
              declared(AccountLockedError),
              declared(RateLimitedError)
            )
          )
      )
      .middleware(Authentication)
  )
