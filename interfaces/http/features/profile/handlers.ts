import { Effect, Option } from "effect"
import { Accounts } from "../../../../application/Accounts.js"
import { toPublicUser } from "../../../../domain/User.js"
import { CurrentPrincipal } from "../../Authentication.js"
import { feature, featureApi, shapeOf } from "../../Feature.js"
import { profileGroup } from "./group.js"

/** The profile group's handlers. */
export const profile = feature({
  name: "profile",
  limits: [],
  api: (context) =>
    featureApi(profileGroup(shapeOf(context)), (handlers) =>
      Effect.gen(function* () {
        const accounts = yield* Accounts
        return handlers
          .handle("me", () => Effect.map(CurrentPrincipal, (principal) => toPublicUser(principal.user)))
          .handle("verifiedMe", () => Effect.map(CurrentPrincipal, (principal) => toPublicUser(principal.user)))
          .handle("updateMe", ({ payload }) =>
            Effect.flatMap(CurrentPrincipal, (principal) => accounts.updateProfile(principal, payload))
          )
          .handle("deleteMe", () => Effect.flatMap(CurrentPrincipal, accounts.deleteAccount))
          .handle("changePassword", ({ payload }) =>
            Effect.flatMap(CurrentPrincipal, (principal) =>
              accounts.changePassword(principal, Option.fromNullable(payload.current_password), payload.new_password)
            ).pipe(Effect.as({ detail: "The password has been changed; your other sessions have ended." }))
          )
      })
    )
})
