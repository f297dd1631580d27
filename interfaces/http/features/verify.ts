import { HttpApiEndpoint, HttpApiGroup } from "@effect/platform"
import { Effect, Schema } from "effect"
import { PasswordReset } from "../../../application/PasswordReset.js"
import { Verification } from "../../../application/Verification.js"
import { InvalidPasswordError } from "../../../domain/errors.js"
import { Email } from "../../../domain/User.js"
import { featureApi, Message, PasswordField, strict, withUseCases } from "../Api.js"
import { Authentication, CurrentPrincipal } from "../Authentication.js"
import { feature } from "../Feature.js"
import { declared, TokenFailure } from "../problems.js"

const TokenBody = (identifier: string) => strict({ token: Schema.String }).annotations({ identifier })

const verificationSent = { detail: "If the address is not verified yet, a verification mail is on its way." }
const resetSent = { detail: "If the address belongs to an account, a reset mail is on its way." }

/** Email verification and password reset by mailed, single-use tokens. */
export const verify = feature({
  name: "verify",
  limits: [
    { bucket: "password_reset", path: "/password-reset/request" },
    { bucket: "password_reset", path: "/password-reset/confirm" },
    { bucket: "verify_email", path: "/verify-email/request" },
    { bucket: "verify_email", path: "/verify-email/confirm" }
  ],
  api: ({ settings }) =>
    withUseCases(
      featureApi(
        {
          prefix: settings.server.authPrefix,
          title: "Verify",
          description: "Email verification and password reset by mailed, single-use tokens."
        },
        HttpApiGroup.make("verify")
          .add(
            HttpApiEndpoint.post("requestVerification", "/verify-email/request")
              .addSuccess(Message, { status: 202 })
              .middleware(Authentication)
          )
          .add(
            HttpApiEndpoint.post("confirmVerification", "/verify-email/confirm")
              .setPayload(TokenBody("VerifyEmailConfirmRequest"))
              .addSuccess(Message)
              .addError(TokenFailure)
          )
          .add(
            HttpApiEndpoint.post("requestPasswordReset", "/password-reset/request")
              .setPayload(strict({ email: Email }).annotations({ identifier: "PasswordResetRequest" }))
              .addSuccess(Message, { status: 202 })
          )
          .add(
            HttpApiEndpoint.post("confirmPasswordReset", "/password-reset/confirm")
              .setPayload(
                strict({ token: Schema.String, new_password: PasswordField }).annotations({
                  identifier: "PasswordResetConfirmRequest"
                })
              )
              .addSuccess(Message)
              .addError(Schema.Union(TokenFailure, declared(InvalidPasswordError)))
          ),
        (handlers) =>
          Effect.gen(function* () {
            const verification = yield* Verification
            const reset = yield* PasswordReset
            return handlers
              .handle("requestVerification", () =>
                Effect.flatMap(CurrentPrincipal, (principal) => verification.send(principal.user)).pipe(
                  Effect.as(verificationSent)
                )
              )
              .handle("confirmVerification", ({ payload }) =>
                verification.confirm(payload.token).pipe(Effect.as({ detail: "The email address is verified." }))
              )
              .handle("requestPasswordReset", ({ payload }) => reset.request(payload.email).pipe(Effect.as(resetSent)))
              .handle("confirmPasswordReset", ({ payload }) =>
                reset
                  .confirm(payload.token, payload.new_password)
                  .pipe(Effect.as({ detail: "The password has been reset; every session has ended." }))
              )
          })
      ),
      PasswordReset.Default
    )
})
