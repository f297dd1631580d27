import * as HttpApiEndpoint from "@effect/platform/HttpApiEndpoint"
import * as HttpApiGroup from "@effect/platform/HttpApiGroup"
import * as OpenApi from "@effect/platform/OpenApi"
import { Schema } from "effect"
import { NewEmail } from "../../../../domain/Address.js"
import {
  AccountLockedError,
  CredentialsChangedError,
  RateLimitedError,
  ReauthenticationError,
  ReauthenticationRequiredError,
  StoreUnavailableError,
  UserAlreadyExistsError
} from "../../../../domain/errors.js"
import { PublicUser } from "../../../../domain/User.js"
import { type ApiShape, limited, Message, PasswordField, placed, strict } from "../../Api.js"
import { declared, TokenFailure } from "../../problemSchemas.js"
import { Authentication } from "../../security.js"

/** The first of a change's two links is in: the other is awaited. */
export const AddressChangeAwaiting = Schema.Struct({
  awaiting: Schema.Literal("current", "new"),
  detail: Schema.String
}).annotations({
  identifier: "EmailChangeAwaiting",
  description:
    "The link used is counted; the account moves once the other one (`current`: the link mailed to the current address; `new`: the one mailed to the new address) is used too.",
  examples: [
    {
      awaiting: "current",
      detail:
        "Confirmed for the new address. The account moves once the link mailed to its current address is used too."
    }
  ]
})

/** An undo's answer: the address the account is back at, where its owner asks for a password reset. */
export const AddressRestored = Schema.Struct({ detail: Schema.String, email: Schema.String }).annotations({
  identifier: "EmailChangeUndone",
  examples: [
    {
      detail:
        "The account is back at this address. Every session has ended and the password was cleared: ask for a password reset to this address to choose a new one.",
      email: "ada@example.com"
    }
  ]
})

/** Changing the signed-in user's address: asked with a recent sign-in and the password, confirmed from both addresses. */
export const emailChangeGroup = (shape: ApiShape) =>
  placed(
    {
      prefix: shape.authPrefix,
      title: "Email change",
      description:
        "Moving an account to another address: asked by its signed-in user (a recent sign-in and the current password), confirmed by the link mailed to the new address and approved by the one mailed to a verified current address; undone from the old address."
    },
    HttpApiGroup.make("emailChange")
      .addError(declared(StoreUnavailableError))
      .add(
        HttpApiEndpoint.post("requestChange", "/me/email")
          .annotate(OpenApi.Summary, "Ask to move the account to another address")
          .annotate(
            OpenApi.Description,
            "Needs a sign-in within REAUTH_MAX_AGE_SECONDS and, when the account has a password, `current_password` (missing or wrong: 400, counted by the lockout). Answers 202 whether the address is free or taken: a free one gets a confirmation link and a verified current address an approval link; a taken one gets a notice of the attempt. A newer request voids an earlier one; the change ends with the session that asked and with a password change or reset."
          )
          .setPayload(
            strict({ new_email: NewEmail, current_password: Schema.optional(PasswordField) }).annotations({
              identifier: "EmailChangeRequest"
            })
          )
          .addSuccess(Message, { status: 202 })
          .addError(
            Schema.Union(
              declared(ReauthenticationError),
              declared(ReauthenticationRequiredError),
              declared(AccountLockedError),
              declared(RateLimitedError)
            )
          )
          .middleware(Authentication)
          .pipe(limited("verify_email"))
      )
      .add(
        HttpApiEndpoint.post("confirmChange", "/me/email/confirm")
          .annotate(OpenApi.Summary, "Use one of an address change's links")
          .annotate(
            OpenApi.Description,
            "The token of either link, once; no session needed. The first of two links answers 202 naming the one awaited; the last moves the account (verified), ends every session but the one that asked, mails the old address an undo link, and answers 200 with the user. An address taken meanwhile answers 409 and changes nothing."
          )
          .setPayload(strict({ token: Schema.String }).annotations({ identifier: "EmailChangeConfirmRequest" }))
          .addSuccess(PublicUser)
          .addSuccess(AddressChangeAwaiting, { status: 202 })
          .addError(Schema.Union(TokenFailure, declared(UserAlreadyExistsError), declared(CredentialsChangedError)))
          .pipe(limited("verify_email"))
      )
      .add(
        HttpApiEndpoint.post("undoChange", "/me/email/undo")
          .annotate(OpenApi.Summary, "Undo an address change from the old address")
          .annotate(
            OpenApi.Description,
            "The token of the undo link mailed to the old address, once, within EMAIL_CHANGE_UNDO_DAYS. The account is back at the old address (verified); every session ends, the password is cleared, and passkeys and provider links added since the change are removed. Set a password with a reset to the restored address."
          )
          .setPayload(strict({ token: Schema.String }).annotations({ identifier: "EmailChangeUndoRequest" }))
          .addSuccess(AddressRestored)
          .addError(Schema.Union(TokenFailure, declared(UserAlreadyExistsError), declared(CredentialsChangedError)))
          .pipe(limited("verify_email"))
      )
  )
