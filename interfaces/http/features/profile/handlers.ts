import { Effect, Option } from "effect"
import { AccessControl } from "../../../../application/AccessControl.js"
import { Accounts } from "../../../../application/Accounts.js"
import { type Me, type PublicUser, toPublicUser, type User } from "../../../../domain/User.js"
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
        const access = yield* AccessControl
        /** The user as /me shows them (`shown`): with the permissions their roles grant now. */
        const withPermissions = (user: User, shown: PublicUser) =>
          Effect.map(access.permissionsOf(user), (permissions): Me => ({ ...shown, permissions }))
        const signedIn = Effect.flatMap(CurrentPrincipal, (principal) =>
          withPermissions(principal.user, toPublicUser(principal.user))
        )
        return handlers
          .handle("me", () => signedIn)
          .handle("verifiedMe", () => signedIn)
          .handle("updateMe", ({ payload }) =>
            Effect.flatMap(CurrentPrincipal, (principal) =>
              Effect.flatMap(accounts.updateProfile(principal, payload), (updated) =>
                withPermissions(principal.user, updated)
              )
            )
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
