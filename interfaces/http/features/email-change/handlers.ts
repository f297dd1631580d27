import { Effect, Option } from "effect"
import { AddressChange, LinkUsed } from "../../../../application/AddressChange.js"
import { AddressChangeUndo } from "../../../../application/AddressChangeUndo.js"
import { CurrentPrincipal } from "../../Authentication.js"
import { feature, featureApi, limitedRoutes, shapeOf } from "../../Feature.js"
import { emailChangeGroup } from "./group.js"

const linkSent = { detail: "If the address can be used, a confirmation link is on its way to it." }

const awaitingDetail = {
  current: "Confirmed for the new address. The account moves once the link mailed to its current address is used too.",
  new: "Approved from the current address. The account moves once the link mailed to the new address is used too."
} as const

/** The email-change group's handlers, over the AddressChange use cases the composition root gives them. */
export const emailChange = feature({
  name: "email-change",
  limits: limitedRoutes(emailChangeGroup),
  api: (context) =>
    featureApi(emailChangeGroup(shapeOf(context)), (handlers) =>
      Effect.gen(function* () {
        const change = yield* AddressChange
        const restore = yield* AddressChangeUndo
        return handlers
          .handle("requestChange", ({ payload }) =>
            Effect.flatMap(CurrentPrincipal, (principal) =>
              change.request(principal, payload.new_email, Option.fromNullable(payload.current_password))
            ).pipe(Effect.as(linkSent))
          )
          .handle("confirmChange", ({ payload }) =>
            Effect.map(
              change.confirm(payload.token),
              LinkUsed.$match({
                Awaiting: ({ awaiting }) => ({ awaiting, detail: awaitingDetail[awaiting] }),
                Moved: ({ user }) => user
              })
            )
          )
          .handle("undoChange", ({ payload }) =>
            Effect.map(restore.undo(payload.token), ({ email }) => ({
              email,
              detail:
                "The account is back at this address. Every session has ended and the password was cleared: ask for a password reset to this address to choose a new one."
            }))
          )
      })
    )
})
