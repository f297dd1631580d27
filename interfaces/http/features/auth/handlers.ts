import { Effect } from "effect"
import { Accounts, Registration } from "../../../../application/Accounts.js"
import { PasswordSignIn } from "../../../../application/PasswordSignIn.js"
import { Refresh } from "../../../../application/Refresh.js"
import { Sessions } from "../../../../application/Sessions.js"
import { CurrentPrincipal } from "../../Authentication.js"
import { clientInfo } from "../../clientInfo.js"
import { SessionTransport } from "../../cookies.js"
import { feature, featureApi, limitedRoutes, shapeOf } from "../../Feature.js"
import { authGroup } from "./group.js"

const accepted = { detail: "If the address can be registered, the account has been created." }

/** The auth group's handlers; always served, whatever the deployment's routeGroups say. */
export const auth = feature({
  name: "auth",
  required: "registration and sign-in",
  limits: limitedRoutes(authGroup),
  api: (context) =>
    featureApi(authGroup(shapeOf(context)), (handlers) =>
      Effect.gen(function* () {
        const accounts = yield* Accounts
        const signIn = yield* PasswordSignIn
        const sessions = yield* Sessions
        const rotation = yield* Refresh
        const transport = yield* SessionTransport
        return handlers
          .handle("register", ({ payload: { email, password, ...extra } }) =>
            accounts
              .register(email, password, extra)
              .pipe(Effect.map(Registration.$match({ Accepted: () => accepted, Created: ({ user }) => user })))
          )
          .handle("login", ({ payload, request }) =>
            signIn
              .login(payload.identifier, payload.password, clientInfo(request))
              .pipe(Effect.flatMap(transport.deliver))
          )
          .handle("refresh", ({ payload, request }) =>
            transport.refresh(request, payload?.refresh_token, (token) => rotation.refresh(token, clientInfo(request)))
          )
          .handle("logout", () =>
            Effect.flatMap(CurrentPrincipal, sessions.logout).pipe(Effect.zipRight(transport.clear))
          )
      })
    )
})
