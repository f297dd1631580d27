// The reference of `npm run bench:provider`: oidc-provider configured as Portcullis's provider is
// (PKCE required, codes living 60 s, refresh tokens rotated at every use), one client and one
// account; prints its issuer once it listens.
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
  configuration: { rotateRefreshToken: true }
})
console.log(running.issuer)
process.on("SIGTERM", () => {
  running.close()
  process.exit(0)
})
