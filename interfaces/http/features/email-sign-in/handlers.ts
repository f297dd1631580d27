import { Effect } from "effect"
import { EmailSignIn } from "../../../../application/EmailSignIn.js"
import { clientInfo } from "../../clientInfo.js"
import { SessionTransport } from "../../cookies.js"
import { feature, featureApi, limitedRoutes, shapeOf } from "../../Feature.js"
import { emailSignInGroup } from "./group.js"

const mailSent = { detail: "If the address can sign in, a mail with a link and a code is on its way." }

/** The email-sign-in group's handlers, over the EmailSignIn use case; served when EMAIL_SIGN_IN_ENABLED. */
export const emailSignIn = feature({
  name: "email-sign-in",
  limits: limitedRoutes(emailSignInGroup),
  enabled: (settings) => settings.accounts.emailSignInEnabled,
  api: (context) =>
    featureApi(emailSignInGroup(shapeOf(context), context.settings.accounts.emailSignUpEnabled), (handlers) =>
      Effect.gen(function* () {
        const signIn = yield* EmailSignIn
        const transport = yield* SessionTransport
        return handlers
          .handle("request", ({ payload: { email, ...extra } }) =>
            signIn.request(email, extra).pipe(Effect.as(mailSent))
          )
          .handle("confirm", ({ payload, request }) =>
            ("token" in payload
              ? signIn.confirmLink(payload.token, clientInfo(request))
              : signIn.confirmCode(payload.email, payload.code, clientInfo(request))
            ).pipe(Effect.flatMap(transport.deliver))
          )
      })
    )
})
