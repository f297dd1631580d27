import { Effect } from "effect"
import { AddressChange } from "../../../../application/AddressChange.js"
import { CurrentPrincipal } from "../../Authentication.js"
import { feature, featureApi, limitedRoutes, shapeOf } from "../../Feature.js"
import { emailChangeGroup } from "./group.js"

const linkSent = { detail: "If the address can be used, a confirmation link is on its way to it." }

/** The email-change group's handlers, over the AddressChange use case the composition root gives them. */
export const emailChange = feature({
  name: "email-change",
  limits: limitedRoutes(emailChangeGroup),
  api: (context) =>
    featureApi(emailChangeGroup(shapeOf(context)), (handlers) =>
      Effect.gen(function* () {
        const change = yield* AddressChange
        return handlers
          .handle("requestChange", ({ payload }) =>
            Effect.flatMap(CurrentPrincipal, (principal) => change.request(principal, payload.new_email)).pipe(
              Effect.as(linkSent)
            )
          )
          .handle("confirmChange", ({ payload }) => change.confirm(payload.token))
      })
    )
})
