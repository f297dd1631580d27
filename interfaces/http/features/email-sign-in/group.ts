import * as HttpApiEndpoint from "@effect/platform/HttpApiEndpoint"
import * as HttpApiGroup from "@effect/platform/HttpApiGroup"
import * as OpenApi from "@effect/platform/OpenApi"
import { Schema } from "effect"
import { NewEmail } from "../../../../domain/Address.js"
import { CODE_DIGITS } from "../../../../domain/EmailSignIn.js"
import {
  AccountLockedError,
  AuthenticationError,
  SignInCodeError,
  StoreUnavailableError
} from "../../../../domain/errors.js"
import { LoginResponse } from "../../../../domain/Token.js"
import { Email } from "../../../../domain/User.js"
import { type ApiShape, limited, Message, placed, runtimeBody, strict } from "../../Api.js"
import { declared, TokenFailure } from "../../problemSchemas.js"

/** The request body: the address, and with sign-up on the deployment's registration fields. */
export interface EmailSignInRequestBody {
  readonly email: Email
  readonly [field: string]: unknown
}

/**
 * With sign-up on the request is where an address enters, so it must look like no other
 * (NewEmail), for every caller alike: the refusal tells nothing of whether the address is known.
 * Without sign-up it only finds accounts, and one stored before that rule still gets its mail.
 */
const requestPayload = (fields: ApiShape["registrationFields"], signUp: boolean) =>
  runtimeBody<EmailSignInRequestBody, { readonly email: string }>(
    strict({ ...fields, email: signUp ? NewEmail : Email }).annotations({ identifier: "EmailSignInRequest" })
  )

const SignInCode = Schema.String.pipe(
  Schema.pattern(new RegExp(`^[0-9]{${CODE_DIGITS}}$`), { message: () => `expected ${CODE_DIGITS} digits` })
).annotations({ description: `The ${CODE_DIGITS}-digit code of the mail.`, examples: ["042917"] })

const ConfirmPayload = Schema.Union(
  strict({ token: Schema.String }).annotations({ identifier: "EmailSignInLinkConfirmation" }),
  strict({ email: Email, code: SignInCode }).annotations({ identifier: "EmailSignInCodeConfirmation" })
)

/**
 * Sign-in by a mailed link or code (EMAIL_SIGN_IN_ENABLED); with EMAIL_SIGN_UP_ENABLED (`signUp`)
 * the request also takes the deployment's registration fields, kept for an account it creates.
 */
export const emailSignInGroup = (shape: ApiShape, signUp = false) =>
  placed(
    {
      prefix: shape.authPrefix,
      title: "Email sign-in",
      description:
        "Sign in by a link or a 6-digit code mailed to the address; with EMAIL_SIGN_UP_ENABLED, an unknown address gets an account (verified, without a password) on confirmation."
    },
    HttpApiGroup.make("emailSignIn")
      .addError(declared(StoreUnavailableError))
      .add(
        HttpApiEndpoint.post("request", "/email-sign-in/request")
          .annotate(OpenApi.Summary, "Mail a sign-in link and code")
          .annotate(
            OpenApi.Description,
            "Answers 202 whatever the address, no sooner for a known one. A new request voids the address's earlier one."
          )
          .setPayload(requestPayload(signUp ? shape.registrationFields : {}, signUp))
          .addSuccess(Message, { status: 202 })
          .pipe(limited("email_sign_in"))
      )
      .add(
        HttpApiEndpoint.post("confirm", "/email-sign-in/confirm")
          .annotate(OpenApi.Summary, "Sign in by the mailed link's token or the code")
          .annotate(
            OpenApi.Description,
            "`{token}` from the link, or `{email, code}`. Each is good once; five wrong codes void the request. Confirming proves the address: an account that never proved it loses every earlier way in and session."
          )
          .setPayload(ConfirmPayload)
          .addSuccess(LoginResponse)
          .addError(
            Schema.Union(
              TokenFailure,
              declared(SignInCodeError),
              declared(AuthenticationError),
              declared(AccountLockedError)
            )
          )
          .pipe(limited("email_sign_in_confirm"))
      )
  )
