// The reference of `npm run bench:provider`: oidc-provider configured as Portcullis's provider is
// (PKCE required, codes living 60 s, refresh tokens rotated at every use, access tokens as RFC 9068
// JWTs signed RS256 beside the RS256 ID token), one client and one account; prints its issuer once
// it listens. Its access tokens are JWTs only for a resource (RFC 8707): every grant gets one by
// default, so that each answer signs what Portcullis's does.
import { start } from "../../test/support/OidcProvider.js"

const running = await start({
  clients: [
    {
      client_id: "bench",
      client_secret: "bench-client-secret",
      redirect_uris: ["https://app.example.com/cb"],
      grant_types: ["authorization_code", "refresh_token"],
      token_endpoint_auth_method: "client_secret_basic"
    }
  ],
  accounts: [
    {
      login: "bench",
      password: "correct horse battery staple",
      claims: { sub: "bench", email: "bench@example.com", email_verified: true, name: "Bench" }
    }
  ],
  configuration: {
    rotateRefreshToken: true,
    features: {
      devInteractions: { enabled: false },
      resourceIndicators: {
        enabled: true,
        defaultResource: () => "https://api.example.com",
        useGrantedResource: () => true,
        getResourceServerInfo: () => ({
          scope: "api",
          audience: "https://api.example.com",
          accessTokenTTL: 600,
          accessTokenFormat: "jwt",
          jwt: { sign: { alg: "RS256" } }
        })
      }
    }
  }
})
console.log(running.issuer)
process.on("SIGTERM", () => {
  running.close()
  process.exit(0)
})
