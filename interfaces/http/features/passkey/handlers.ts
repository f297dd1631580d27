import { Effect, Option } from "effect"
import { Passkeys } from "../../../../application/Passkeys.js"
import { CurrentPrincipal } from "../../Authentication.js"
import { clientInfo } from "../../clientInfo.js"
import { SessionTransport } from "../../cookies.js"
import { feature, featureApi, limitedRoutes, shapeOf } from "../../Feature.js"
import { passkeyGroup } from "./group.js"

/**
 * The passkey group's handlers, over the Passkeys use case the composition root gives them;
 * served when PASSKEY_ENABLED.
 */
export const passkey = feature({
  name: "passkey",
  limits: limitedRoutes(passkeyGroup),
  enabled: (settings) => settings.passkeys.passkeyEnabled,
  api: (context) =>
    featureApi(passkeyGroup(shapeOf(context)), (handlers) =>
      Effect.gen(function* () {
        const passkeys = yield* Passkeys
        const transport = yield* SessionTransport
        return handlers
          .handle("registerBegin", () => Effect.flatMap(CurrentPrincipal, passkeys.registerBegin))
          .handle("registerComplete", ({ payload }) =>
            Effect.flatMap(CurrentPrincipal, (principal) => passkeys.registerComplete(principal, payload))
          )
          .handle("authenticateBegin", ({ payload }) => passkeys.authenticateBegin(Option.fromNullable(payload?.email)))
          .handle("authenticateComplete", ({ payload, request }) =>
            passkeys.authenticateComplete(payload, clientInfo(request)).pipe(Effect.flatMap(transport.deliver))
          )
          .handle("list", () => Effect.flatMap(CurrentPrincipal, passkeys.list))
          .handle("delete", ({ path }) =>
            Effect.flatMap(CurrentPrincipal, (principal) => passkeys.delete(principal, path.passkey_id))
          )
      })
    )
})
