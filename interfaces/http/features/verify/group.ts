import * as HttpApiEndpoint from "@effect/platform/HttpApiEndpoint"
import * as HttpApiGroup from "@effect/platform/HttpApiGroup"
import * as OpenApi from "@effect/platform/OpenApi"
import { Schema } from "effect"
import { InvalidPasswordError, StoreUnavailableError } from "../../../../domain/errors.js"
import { Email } from "../../../../domain/User.js"
import { type ApiShape, limited, Message, PasswordField, placed, strict } from "../../Api.js"
import { declared, TokenFailure } from "../../problemSchemas.js"
import { Authentication } from "../../security.js"

const TokenBody = (identifier: string) => strict({ token: Schema.String }).annotations({ identifier })

/** Email verification and password reset by mailed, single-use tokens. */
export const verifyGroup = (shape: ApiShape) =>
  placed(
    {
      prefix: shape.authPrefix,
      title: "Verify",
      description: "Email verification and password reset by mailed, single-use tokens."
    },
    HttpApiGroup.make("verify")
      .addError(declared(StoreUnavailableError))
      .add(
        HttpApiEndpoint.post("requestVerification", "/verify-email/request")
          .annotate(OpenApi.Summary, "Mail a verification link")
          .addSuccess(Message, { status: 202 })
          .middleware(Authentication)
          .pipe(limited("verify_email"))
      )
      .add(
        HttpApiEndpoint.post("confirmVerification", "/verify-email/confirm")
          .annotate(OpenApi.Summary, "Verify the email address")
          .setPayload(TokenBody("VerifyEmailConfirmRequest"))
          .addSuccess(Message)
          .addError(TokenFailure)
          .pipe(limited("verify_email"))
      )
      .add(
        HttpApiEndpoint.post("requestPasswordReset", "/password-reset/request")
          .annotate(OpenApi.Summary, "Mail a password-reset link")
          .setPayload(strict({ email: Email }).annotations({ identifier: "PasswordResetRequest" }))
          .addSuccess(Message, { status: 202 })
          .pipe(limited("password_reset"))
      )
      .add(
        HttpApiEndpoint.post("confirmPasswordReset", "/password-reset/confirm")
          .annotate(OpenApi.Summary, "Reset the password")
          .setPayload(
            strict({ token: Schema.String, new_password: PasswordField }).annotations({
              identifier: "PasswordResetConfirmRequest"
            })
          )
          .addSuccess(Message)
          .addError(Schema.Union(TokenFailure, declared(InvalidPasswordError)))
          .pipe(limited("password_reset"))
      )
  )
