import { HttpApiGroup } from "@effect/platform"
import { PREFIX } from "../../../config/reader.js"
import type { Settings } from "../../../config/Settings.js"
import { featureApi } from "../Api.js"
import { feature } from "../Feature.js"

const configured = (settings: Settings) => settings.oauth.oauthProviders.length > 0

/**
 * Social sign-in through OAuth providers, served when at least one is configured. Its routes
 * arrive with its use cases; until then start-up refuses a configured provider.
 */
export const oauth = feature({
  name: "oauth",
  limits: [{ bucket: "oauth_callback", path: "/oauth/:provider/callback" }],
  enabled: configured,
  unsupported: (settings) =>
    configured(settings) ? [`${PREFIX}OAUTH_*: OAuth sign-in is not supported by this version yet`] : [],
  api: ({ settings }) =>
    featureApi(
      { prefix: settings.server.authPrefix, title: "OAuth", description: "Social sign-in and account linking." },
      HttpApiGroup.make("oauth"),
      (handlers) => handlers
    )
})
