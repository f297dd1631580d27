import { Effect } from "effect"
import { PasswordReset } from "../../../../application/PasswordReset.js"
import { Verification } from "../../../../application/Verification.js"
import { CurrentPrincipal } from "../../Authentication.js"
import { feature, featureApi, limitedRoutes, shapeOf } from "../../Feature.js"
import { verifyGroup } from "./group.js"

const verificationSent = { detail: "If the address is not verified yet, a verification mail is on its way." }
const resetSent = { detail: "If the address belongs to an account, a reset mail is on its way." }

/** The verify group's handlers, over Verification and the PasswordReset use case the composition root gives them. */
export const verify = feature({
  name: "verify",
  limits: limitedRoutes(verifyGroup),
  api: (context) =>
    featureApi(verifyGroup(shapeOf(context)), (handlers) =>
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
    )
})
