import { Effect, Option } from "effect"
import { OAuthLinking } from "../../../../application/OAuthLinking.js"
import { OAuthSignIn } from "../../../../application/OAuthSignIn.js"
import { oauthProviders } from "../../../../config/oauthProviders.js"
import { CurrentPrincipal } from "../../Authentication.js"
import { clientInfo } from "../../clientInfo.js"
import { SessionTransport } from "../../cookies.js"
import { feature, featureApi, limitedRoutes, shapeOf } from "../../Feature.js"
import { oauthGroup } from "./group.js"

/**
 * The oauth group's handlers, over the OAuthSignIn and OAuthLinking use cases the composition
 * root gives them; served when at least one provider is configured, in settings or in the
 * deployment's code.
 */
export const oauth = feature({
  name: "oauth",
  limits: limitedRoutes(oauthGroup),
  enabled: (settings, deployment) => oauthProviders(settings, deployment).length > 0,
  api: (context) =>
    featureApi(oauthGroup(shapeOf(context)), (handlers) =>
      Effect.gen(function* () {
        const signIn = yield* OAuthSignIn
        const linking = yield* OAuthLinking
        const transport = yield* SessionTransport
        return handlers
          .handle("providers", () => Effect.succeed({ providers: signIn.providers }))
          .handle("authorize", ({ path, urlParams }) => signIn.authorize(path.provider, urlParams.redirect_uri))
          .handle("callback", ({ path, payload, request }) =>
            signIn.signIn(path.provider, payload, clientInfo(request)).pipe(Effect.flatMap(transport.deliver))
          )
          .handle("authorizeLink", ({ path, urlParams }) =>
            Effect.flatMap(CurrentPrincipal, (principal) =>
              linking.authorizeLink(principal, path.provider, urlParams.redirect_uri)
            )
          )
          .handle("link", ({ path, payload }) =>
            Effect.flatMap(CurrentPrincipal, (principal) => linking.link(principal, path.provider, payload))
          )
          .handle("accounts", () =>
            Effect.flatMap(CurrentPrincipal, (principal) => linking.accounts(principal.user.id)).pipe(
              Effect.map((linked) =>
                linked.map((account) => ({
                  provider: account.provider,
                  provider_user_id: account.provider_user_id,
                  provider_email: Option.getOrNull(account.provider_email),
                  created_at: account.created_at
                }))
              )
            )
          )
          .handle("unlink", ({ path }) =>
            Effect.flatMap(CurrentPrincipal, (principal) => linking.unlink(principal, path.provider))
          )
      })
    )
})
