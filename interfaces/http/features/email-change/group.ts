import * as HttpApiEndpoint from "@effect/platform/HttpApiEndpoint"
import * as HttpApiGroup from "@effect/platform/HttpApiGroup"
import * as OpenApi from "@effect/platform/OpenApi"
import { Schema } from "effect"
import { NewEmail } from "../../../../domain/Address.js"
import {
  CredentialsChangedError,
  ReauthenticationRequiredError,
  StoreUnavailableError,
  UserAlreadyExistsError
} from "../../../../domain/errors.js"
import { PublicUser } from "../../../../domain/User.js"
import { type ApiShape, limited, Message, placed, strict } from "../../Api.js"
import { declared, TokenFailure } from "../../problemSchemas.js"
import { Authentication } from "../../security.js"

/** Changing the signed-in user's address: asked with a recent sign-in, confirmed from the new address. */
export const emailChangeGroup = (shape: ApiShape) =>
  placed(
    {
      prefix: shape.authPrefix,
      title: "Email change",
      description:
        "Moving an account to another address: asked by its signed-in user (a recent sign-in), confirmed by the link mailed to the new address."
    },
    HttpApiGroup.make("emailChange")
      .addError(declared(StoreUnavailableError))
      .add(
        HttpApiEndpoint.post("requestChange", "/me/email")
          .annotate(OpenApi.Summary, "Ask to move the account to another address")
          .annotate(
            OpenApi.Description,
            "Needs a sign-in within REAUTH_MAX_AGE_SECONDS. Answers 202 whether the address is free or taken: a free one gets a confirmation link, a taken one a notice of the attempt; the current address is told either way."
          )
          .setPayload(strict({ new_email: NewEmail }).annotations({ identifier: "EmailChangeRequest" }))
          .addSuccess(Message, { status: 202 })
          .addError(declared(ReauthenticationRequiredError))
          .middleware(Authentication)
          .pipe(limited("verify_email"))
      )
      .add(
        HttpApiEndpoint.post("confirmChange", "/me/email/confirm")
          .annotate(OpenApi.Summary, "Move the account to the confirmed address")
          .annotate(
            OpenApi.Description,
            "The token of the link mailed to the new address, once. The account moves and is verified, every session but the one that asked ends, and the old address is told; an address taken meanwhile answers 409 and changes nothing."
          )
          .setPayload(strict({ token: Schema.String }).annotations({ identifier: "EmailChangeConfirmRequest" }))
          .addSuccess(PublicUser)
          .addError(Schema.Union(TokenFailure, declared(UserAlreadyExistsError), declared(CredentialsChangedError)))
          .pipe(limited("verify_email"))
      )
  )
